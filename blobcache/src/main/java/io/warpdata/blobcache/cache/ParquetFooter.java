package io.warpdata.blobcache.cache;

/**
 * Reads where the column chunks of a Parquet file lie from its footer, and nothing else: the
 * file's last 8 bytes are the footer's length and {@code PAR1}; the footer is a Thrift
 * compact-protocol {@code FileMetaData} whose row groups list their column chunks, each with a
 * {@code ColumnMetaData} holding {@code data_page_offset} (field 9), {@code dictionary_page_offset}
 * (11) and {@code total_compressed_size} (7). A chunk is {@code [dictionary page or first data
 * page, + total_compressed_size)}.
 *
 * <p>The bytes are verified (they are a blob's), but what the publisher wrote in them is not: the
 * reader never throws and never loops or allocates beyond what the input bounds. Every read is
 * checked against the end, nesting is bounded by {@link #MAX_DEPTH}, a list's length by the bytes
 * left (each element takes at least one), the chunks by {@link #MAX_CHUNKS}; anything odd gives
 * {@link ColumnChunks#UNKNOWN}. One struct walker ({@link Compact#struct}) serves every level:
 * a level says which fields it wants, the walker skips the rest.
 */
final class ParquetFooter {
    /** The tail: footer length (4 bytes, little-endian) and the magic. */
    static final int TAIL_BYTES = 8;
    /**
     * Largest footer read: 16 MiB. DuckDB's and Spark's footers are a few KiB to a few MiB (about
     * 100 bytes per column chunk); a larger one is not worth reading on a FUSE read thread.
     */
    static final int MAX_FOOTER_BYTES = 16 << 20;
    /**
     * Most column chunks kept per file: 16,384 (256 KiB of offsets): 64 columns x 256 row groups.
     * A file with more is left unknown rather than held in memory.
     */
    static final int MAX_CHUNKS = 1 << 14;
    /** Thrift nesting allowed: FileMetaData is 4 levels deep where we look; statistics and schemas a few more. */
    static final int MAX_DEPTH = 16;

    private static final int STOP = 0;
    private static final int TRUE = 1;
    private static final int FALSE = 2;
    private static final int BYTE = 3;
    private static final int I16 = 4;
    private static final int I32 = 5;
    private static final int I64 = 6;
    private static final int DOUBLE = 7;
    private static final int BINARY = 8;
    private static final int LIST = 9;
    private static final int SET = 10;
    private static final int MAP = 11;
    private static final int STRUCT = 12;
    private static final int UUID = 13;

    private ParquetFooter() {
    }

    /**
     * The footer's length from a blob's last {@link #TAIL_BYTES} bytes, or -1 if they are not a
     * plain Parquet tail ({@code PAR1}; an encrypted footer, {@code PARE}, is not read) or the
     * length cannot be right for a blob of {@code blobSize} bytes.
     */
    static int footerLength(byte[] tail, long blobSize) {
        if (tail.length != TAIL_BYTES || tail[4] != 'P' || tail[5] != 'A' || tail[6] != 'R' || tail[7] != '1') {
            return -1;
        }
        int len = (tail[0] & 0xff) | (tail[1] & 0xff) << 8 | (tail[2] & 0xff) << 16 | (tail[3] & 0xff) << 24;
        // The file starts with PAR1 too: a footer can take at most what lies between it and the tail.
        return len <= 0 || len > MAX_FOOTER_BYTES || len > blobSize - 4 - TAIL_BYTES ? -1 : len;
    }

    /**
     * The column chunks a footer ({@code FileMetaData}, read from {@code footerStart}) describes,
     * or {@link ColumnChunks#UNKNOWN} if it is not one, describes chunks outside
     * {@code [4, footerStart)} or in other files ({@code file_path}), or has more than
     * {@link #MAX_CHUNKS}. Never throws.
     */
    static ColumnChunks chunks(byte[] footer, long footerStart) {
        Chunks found = new Chunks(footerStart);
        try {
            new Compact(footer).struct(0, found::fileMetaData);
        } catch (Malformed | RuntimeException e) {
            return ColumnChunks.UNKNOWN;
        }
        return found.bad ? ColumnChunks.UNKNOWN : ColumnChunks.of(found.starts, found.ends, found.n);
    }

    /** What the walk collects: the levels FileMetaData -> RowGroup -> ColumnChunk -> ColumnMetaData. */
    private static final class Chunks {
        final long limit;
        long[] starts = new long[64];
        long[] ends = new long[64];
        int n;
        boolean bad;
        // The ColumnMetaData being read.
        long dataPage;
        long dictionaryPage;
        long compressed;

        Chunks(long limit) {
            this.limit = limit;
        }

        boolean fileMetaData(Compact in, int id, int type) throws Malformed {
            if (id != 4 || type != LIST) {
                return false; // row_groups only
            }
            in.structs(1, this::rowGroup);
            return true;
        }

        boolean rowGroup(Compact in, int id, int type) throws Malformed {
            if (id != 1 || type != LIST) {
                return false; // columns only
            }
            in.structs(2, this::columnChunk);
            return true;
        }

        boolean columnChunk(Compact in, int id, int type) throws Malformed {
            if (id == 1 && type == BINARY) {
                bad = true; // file_path: the chunk lies in another file
                return false;
            }
            if (id != 3 || type != STRUCT) {
                return false; // meta_data only
            }
            dataPage = -1;
            dictionaryPage = -1;
            compressed = -1;
            in.struct(3, this::columnMetaData);
            add();
            return true;
        }

        boolean columnMetaData(Compact in, int id, int type) throws Malformed {
            if (type != I64) {
                return false;
            }
            switch (id) {
                case 7 -> compressed = in.i64();
                case 9 -> dataPage = in.i64();
                case 11 -> dictionaryPage = in.i64();
                default -> {
                    return false;
                }
            }
            return true;
        }

        private void add() throws Malformed {
            // Some writers put 0 for "no dictionary page": the chunk starts at the earlier real page.
            long start = dictionaryPage > 0 && dictionaryPage < dataPage ? dictionaryPage : dataPage;
            if (start < 4 || compressed <= 0 || compressed > limit - start) {
                bad = true;
                throw Malformed.INSTANCE;
            }
            if (n == MAX_CHUNKS) {
                bad = true;
                throw Malformed.INSTANCE;
            }
            if (n == starts.length) {
                starts = java.util.Arrays.copyOf(starts, n * 2);
                ends = java.util.Arrays.copyOf(ends, n * 2);
            }
            starts[n] = start;
            ends[n] = start + compressed;
            n++;
        }
    }

    /** A field of a struct being walked: read it and answer true, or answer false to have it skipped. */
    @FunctionalInterface
    private interface Field {
        boolean read(Compact in, int id, int type) throws Malformed;
    }

    /** Garbage: unwinds the walk (no stack trace: it is an answer, not a bug). */
    private static final class Malformed extends Exception {
        static final Malformed INSTANCE = new Malformed();

        private Malformed() {
            super("malformed Parquet footer", null, false, false);
        }
    }

    /** Thrift's compact protocol over a byte array, every read bounded by its end. */
    private static final class Compact {
        private final byte[] b;
        private int pos;

        Compact(byte[] b) {
            this.b = b;
        }

        /** The one field loop: reads a struct's fields up to STOP, handing each to {@code fields} (null: skip all). */
        void struct(int depth, Field fields) throws Malformed {
            if (depth > MAX_DEPTH) {
                throw Malformed.INSTANCE;
            }
            int id = 0;
            while (true) {
                int header = u8();
                int type = header & 0x0f;
                if (type == STOP) {
                    return;
                }
                int delta = header >>> 4;
                id = delta != 0 ? id + delta : zigzag((int) varint());
                if (fields == null || !fields.read(this, id, type)) {
                    skip(type, depth);
                }
            }
        }

        /** A list of structs, each walked with {@code fields}. */
        void structs(int depth, Field fields) throws Malformed {
            int header = u8();
            int size = listSize(header);
            if ((header & 0x0f) != STRUCT) {
                for (int i = 0; i < size; i++) {
                    skip(header & 0x0f, depth);
                }
                return;
            }
            for (int i = 0; i < size; i++) {
                struct(depth + 1, fields);
            }
        }

        long i64() throws Malformed {
            long v = varint();
            return (v >>> 1) ^ -(v & 1);
        }

        private void skip(int type, int depth) throws Malformed {
            if (depth > MAX_DEPTH) {
                throw Malformed.INSTANCE;
            }
            switch (type) {
                case TRUE, FALSE -> { } // a field's boolean is in its header
                case BYTE -> take(1);
                case I16, I32, I64 -> varint();
                case DOUBLE -> take(8);
                case UUID -> take(16);
                case BINARY -> take(length());
                case LIST, SET -> {
                    int header = u8();
                    int size = listSize(header);
                    int elem = header & 0x0f;
                    for (int i = 0; i < size; i++) {
                        skipElement(elem, depth + 1);
                    }
                }
                case MAP -> {
                    int size = length();
                    if (size > 0) {
                        int kv = u8();
                        for (int i = 0; i < size; i++) {
                            skipElement(kv >>> 4, depth + 1);
                            skipElement(kv & 0x0f, depth + 1);
                        }
                    }
                }
                case STRUCT -> struct(depth + 1, null);
                default -> throw Malformed.INSTANCE;
            }
        }

        /** In a list or map a boolean takes a byte of its own. */
        private void skipElement(int type, int depth) throws Malformed {
            if (type == TRUE || type == FALSE) {
                take(1);
            } else {
                skip(type, depth);
            }
        }

        private int listSize(int header) throws Malformed {
            int size = header >>> 4;
            if (size == 15) {
                size = length();
            }
            if (size > b.length - pos) {
                throw Malformed.INSTANCE; // every element takes at least a byte
            }
            return size;
        }

        private int length() throws Malformed {
            long v = varint();
            if (v < 0 || v > b.length - pos) {
                throw Malformed.INSTANCE;
            }
            return (int) v;
        }

        private void take(int n) throws Malformed {
            if (n > b.length - pos) {
                throw Malformed.INSTANCE;
            }
            pos += n;
        }

        private int u8() throws Malformed {
            if (pos >= b.length) {
                throw Malformed.INSTANCE;
            }
            return b[pos++] & 0xff;
        }

        private long varint() throws Malformed {
            long v = 0;
            for (int shift = 0; shift < 64; shift += 7) {
                int x = u8();
                v |= (long) (x & 0x7f) << shift;
                if ((x & 0x80) == 0) {
                    return v;
                }
            }
            throw Malformed.INSTANCE;
        }

        private static int zigzag(int v) {
            return (v >>> 1) ^ -(v & 1);
        }
    }
}
