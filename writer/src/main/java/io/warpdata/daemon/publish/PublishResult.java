package io.warpdata.daemon.publish;

import java.util.List;

import io.warpdata.daemon.ByteSize;
import io.warpdata.manifest.DatasetId;
import io.warpdata.manifest.VersionHash;

/**
 * What a publish did. {@code latestSet}: latest names the version after it (moved by it with
 * --set-latest, or already naming it).
 */
public record PublishResult(DatasetId dataset,
                            VersionHash version,
                            int tables,
                            int tableFiles,
                            long rows,
                            int artifacts,
                            long members,
                            int blobsUploaded,
                            int blobsSkipped,
                            long bytesUploaded,
                            long bytesSkipped,
                            boolean manifestWritten,
                            boolean latestSet,
                            List<String> pointersMoved,
                            List<String> notes,
                            int formatVersion) {
    public PublishResult {
        pointersMoved = List.copyOf(pointersMoved);
        notes = List.copyOf(notes);
    }

    /**
     * The summary printed at the end of a publish: one line; a second saying how to read or
     * point latest at the version when neither latest nor a branch was moved to it; then a
     * {@code note:} line for each note (a tensor warehouse's thresholds not checked, or violated
     * and published as allowed).
     */
    public String summary() {
        return "published " + dataset + "@" + version.hex() + ": " + tables + " table(s), " + tableFiles
                + " file(s), " + rows + " row(s), " + artifacts + " artifact(s), " + members + " member(s); uploaded "
                + blobsUploaded + " blob(s) (" + ByteSize.format(bytesUploaded) + "), skipped " + blobsSkipped
                + " already stored (" + ByteSize.format(bytesSkipped) + ")"
                + (manifestWritten ? "" : "; version already existed")
                + (pointersMoved.isEmpty() ? "" : "; " + String.join(", ", pointersMoved))
                + (latestSet || pointersMoved.stream().anyMatch(m -> m.startsWith("branch ")) ? ""
                : "\nlatest of " + dataset + " not moved: read this version as " + dataset + "@"
                + version.shortHex(16) + ", or point latest at it with: warpctl latest " + dataset + " "
                + version.shortHex(16) + " (or publish with --set-latest)")
                + notes.stream().map(n -> "\nnote: " + n).collect(java.util.stream.Collectors.joining());
    }
}
