package io.warpdata.manifest;

import java.util.Locale;

/** How a bound table column's values are to be read. */
public enum RefType {
    FILE, IMAGE, AUDIO, VIDEO;

    public String json() {
        return name().toLowerCase(Locale.ROOT);
    }

    public static RefType fromJson(String value) {
        for (RefType t : values()) {
            if (t.json().equals(value)) {
                return t;
            }
        }
        throw new ManifestValidationException("ref_type", "unknown ref type '" + value
                + "' (file, image, audio, video)");
    }
}
