package io.warpdata.manifest;

import java.util.Optional;
import java.util.regex.Pattern;

/**
 * What a user names: {@code ws/name} (the latest version) or {@code ws/name@<hash prefix>}
 * (a fixed version; at least 8 hex digits).
 */
public record DatasetRef(DatasetId id, Optional<String> versionPrefix) {
    private static final Pattern PREFIX = Pattern.compile("^[0-9a-f]{8,64}$");

    public DatasetRef {
        versionPrefix.ifPresent(p -> {
            if (!PREFIX.matcher(p).matches()) {
                throw new ManifestValidationException("version", "'" + p
                        + "' is not a version hash or a prefix of at least 8 lowercase hex digits");
            }
        });
    }

    public static DatasetRef parse(String text) {
        int at = text == null ? -1 : text.indexOf('@');
        if (at < 0) {
            return new DatasetRef(DatasetId.parse(text), Optional.empty());
        }
        return new DatasetRef(DatasetId.parse(text.substring(0, at)), Optional.of(text.substring(at + 1)));
    }

    public static DatasetRef latest(DatasetId id) {
        return new DatasetRef(id, Optional.empty());
    }

    @Override
    public String toString() {
        return versionPrefix.map(p -> id + "@" + p).orElse(id.toString());
    }
}
