package io.warpdata.daemon.control.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;

import java.util.List;
import java.util.Map;

/**
 * {@code publish}: publish with the daemon's credentials, from files the peer could read itself.
 */
public final class PublishCall {
    private PublishCall() {
    }

    /**
     * @param dataset   workspace/name, without @version (publish makes the version)
     * @param tables    table name to absolute paths (already expanded by the client)
     * @param artifacts artifact name to absolute paths
     * @param bindings  {@code table.column=artifact:ref_type} each
     * @param shardSize target shard size; the default when absent or 0
     * @param branch    move this branch to the new version
     * @param shardFiles record WebDataset tars' file names (manifest format 3); absent: true, and
     *                  the reply notes that a client from before format 3 cannot read such a
     *                  version (audit 42); this release's clients name it
     * @param tensorHashes hash each tensor of safetensors files and deflate their headers
     *                  (formats 4 and 5); absent: true, likewise
     * @param readsFormat the newest manifest format the client's release reads (this release's
     *                  clients send it, since 2026-12-01): the reply notes a version newer than
     *                  that; absent: 4 when the client names tensorHashes, 3 when it names only
     *                  shardFiles, else 2
     * @param tensorHeaders with tensorHashes, hash every shard's safetensors files and write their
     *                  headers deflated (format 5); false: as the release before, only shards of
     *                  64 MiB or more hashed and no headers (format 4 at most); absent: true
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Request(@JsonProperty(required = true) String dataset,
                          Map<String, PathList> tables,
                          Map<String, PathList> artifacts,
                          Names bindings,
                          boolean setLatest,
                          ByteCount shardSize,
                          String branch,
                          boolean allowThresholdViolations,
                          boolean allowMissingMembers,
                          Boolean shardFiles,
                          Boolean tensorHashes,
                          Integer readsFormat,
                          Boolean tensorHeaders) {
        public Request {
            tables = tables == null ? Map.of() : tables;
            artifacts = artifacts == null ? Map.of() : artifacts;
        }

        /** A publish from a client that does not say which formats it reads. */
        public Request(String dataset, Map<String, PathList> tables, Map<String, PathList> artifacts, Names bindings,
                       boolean setLatest, ByteCount shardSize, String branch, boolean allowThresholdViolations,
                       boolean allowMissingMembers, Boolean shardFiles, Boolean tensorHashes) {
            this(dataset, tables, artifacts, bindings, setLatest, shardSize, branch, allowThresholdViolations,
                    allowMissingMembers, shardFiles, tensorHashes, null, null);
        }

        /** The newest format the client reads, as {@link #readsFormat} says or its options imply. */
        public int clientReadsFormat() {
            return readsFormat != null ? readsFormat : tensorHashes != null ? 4 : shardFiles != null ? 3 : 2;
        }

        /** A publish whose safetensors members' tensors are hashed (tensorHashes absent: true). */
        public Request(String dataset, Map<String, PathList> tables, Map<String, PathList> artifacts, Names bindings,
                       boolean setLatest, ByteCount shardSize, String branch, boolean allowThresholdViolations,
                       boolean allowMissingMembers, Boolean shardFiles) {
            this(dataset, tables, artifacts, bindings, setLatest, shardSize, branch, allowThresholdViolations,
                    allowMissingMembers, shardFiles, null);
        }

        /** A publish whose WebDataset tars are shown as files too (shardFiles absent: true). */
        public Request(String dataset, Map<String, PathList> tables, Map<String, PathList> artifacts, Names bindings,
                       boolean setLatest, ByteCount shardSize, String branch, boolean allowThresholdViolations,
                       boolean allowMissingMembers) {
            this(dataset, tables, artifacts, bindings, setLatest, shardSize, branch, allowThresholdViolations,
                    allowMissingMembers, null);
        }
    }

    /** A progress event: what the publish is doing now. */
    public record Progress(String message) {
    }

    /**
     * @param summary the line(s) warpctl prints at the end
     * @param formatVersion the manifest format the version was written in (null from a warpd
     *                      before this field: one that may not know the formats its client asked for)
     */
    public record Reply(@JsonProperty(required = true) String dataset,
                        @JsonProperty(required = true) String version,
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
                        String summary,
                        Integer formatVersion) {
        public Reply {
            pointersMoved = pointersMoved == null ? List.of() : List.copyOf(pointersMoved);
            notes = notes == null ? List.of() : List.copyOf(notes);
        }
    }
}
