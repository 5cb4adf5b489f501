package io.warpdata.manifest;

import com.fasterxml.jackson.core.JsonGenerator;

import java.io.IOException;

/**
 * A {@link BlobRef} in JSON: {@code blocks}, {@code byte_size}, {@code hash}. These are the first
 * keys, in sorted order, of every object that holds a blob (a table shard adds {@code name} and
 * {@code row_count} after them).
 */
final class BlobRefCodec {
    static final String BLOCKS = "blocks";
    static final String BYTE_SIZE = "byte_size";
    static final String HASH = "hash";

    private BlobRefCodec() {
    }

    static void writeFields(JsonGenerator g, BlobRef b) throws IOException {
        g.writeStringField(BLOCKS, b.blocks().hex());
        g.writeNumberField(BYTE_SIZE, b.size());
        g.writeStringField(HASH, b.id().hex());
    }

    /** Writes a blob as an object of its own. */
    static void write(JsonGenerator g, BlobRef b) throws IOException {
        g.writeStartObject();
        writeFields(g, b);
        g.writeEndObject();
    }

    /** The blob fields of {@code o} (whose keys the caller has already allowed). */
    static BlobRef read(StrictJson.Obj o) {
        BlobId blocks = o.blobId(BLOCKS);
        long size = o.integer(BYTE_SIZE);
        BlobId hash = o.blobId(HASH);
        return o.check(o.path(), () -> new BlobRef(hash, size, blocks));
    }

    /** An object holding a blob and nothing else. */
    static BlobRef readObject(StrictJson.Obj o) {
        return read(o.allow(BLOCKS, BYTE_SIZE, HASH));
    }
}
