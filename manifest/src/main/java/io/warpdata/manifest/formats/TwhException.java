package io.warpdata.manifest.formats;

import io.warpdata.manifest.WarpException;

/**
 * A TWH1 tensor-warehouse shard that breaks the format (seed 003): names the shard file and,
 * where there is one, the header field at fault. Publish refuses such a shard before anything is
 * uploaded.
 */
public final class TwhException extends WarpException {
    private final String file;
    private final String field;

    /**
     * @param field the header field at fault ({@code magic}, {@code samples}, {@code boxes_offset},
     *              ...), or null for the file as a whole
     */
    public TwhException(String file, String field, String problem) {
        super("TWH1 shard " + file + (field == null ? "" : ": " + field) + " " + problem,
                "Write the shard again with the warehouse's ETL writer (and its manifest.json with it), or leave it out of"
                        + " the artifact.");
        this.file = file;
        this.field = field;
    }

    /** The shard at fault. */
    public String file() {
        return file;
    }

    /** The header field at fault, or null. */
    public String field() {
        return field;
    }

    @Override
    public String type() {
        return "InvalidTwhShard";
    }
}
