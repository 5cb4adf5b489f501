package io.warpdata.daemon.publish;

import org.apache.commons.compress.archivers.tar.TarUtils;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * A tar's headers, walked from their checksums and sizes alone: no member's bytes are read, so a
 * tar of a million members is walked in its headers' reads. Each header's size says where the
 * next one is; a PAX extended header's {@code size=} record (a member of 8 GiB or more, whose
 * ustar size field cannot hold it) gives the size of the member it precedes. The walk stops
 * quietly at the first record that is not a header (zeros at the end, a bad checksum, a size
 * the file cannot hold): what is wrong with a tar is the tar reader's to say, naming it.
 *
 * <p>One walker for warpd's check of a publish's size ({@code PublishOperation}) and the
 * indexer's checks for what its tar reader would misread (PAX sparse files, a global header
 * alone).
 */
public final class TarHeaders {
    static final int RECORD = 512;
    /** PAX extended headers larger than this are not read (real ones are a few hundred bytes). */
    static final int MAX_PAX_BYTES = 1 << 20;

    /** Why a walk stopped. */
    public enum End {
        /** A record of zeros: the end-of-archive marker. */
        ZEROS,
        /** The file ended where a header was due. */
        END_OF_FILE,
        /** A record that is not a header (its checksum fails), or a size the file cannot hold. */
        NOT_A_HEADER,
        /** The visitor asked to stop. */
        STOPPED
    }

    /**
     * One header: its offset, type flag, the size of its data (for a member, after its PAX
     * {@code size=} record, if any), and, for a PAX header ('x' or 'g') of at most {@link
     * #MAX_PAX_BYTES}, its records' bytes (else null; {@link #pax()} decodes them).
     */
    public record Header(long at, byte type, long size, byte[] paxRecords) {
        /** A regular file (ustar '0', old tar's NUL, contiguous '7'). */
        public boolean regularFile() {
            return type == '0' || type == 0 || type == '7';
        }

        /** A PAX header's records as text, or null: decoded only when asked (GNU tar writes one per member). */
        public String pax() {
            return paxRecords == null ? null : new String(paxRecords, StandardCharsets.UTF_8);
        }
    }

    /** Sees each header in turn; false stops the walk. */
    @FunctionalInterface
    public interface Visitor {
        boolean visit(Header header);
    }

    /** How a walk ended: why, and the offset of the record it stopped at. */
    public record Walked(End end, long at) {
    }

    private TarHeaders() {
    }

    /**
     * Walks the headers of {@code tar} from its start.
     *
     * @throws IOException if the file cannot be read
     */
    public static Walked walk(Path tar, Visitor visitor) throws IOException {
        byte[] header = new byte[RECORD];
        try (FileChannel ch = FileChannel.open(tar)) {
            long length = ch.size();
            long at = 0;
            long nextSize = -1; // from a PAX 'x' header: the size of the member that follows
            while (true) {
                if (at + RECORD > length || !readFully(ch, ByteBuffer.wrap(header), at)) {
                    return new Walked(End.END_OF_FILE, at);
                }
                if (allZero(header)) {
                    return new Walked(End.ZEROS, at);
                }
                long size = checksumMatches(header) ? size(header) : -1;
                if (size < 0 || size > length - at - RECORD) {
                    return new Walked(End.NOT_A_HEADER, at);
                }
                byte type = header[156];
                byte[] records = null;
                if ((type == 'x' || type == 'g') && size <= MAX_PAX_BYTES) {
                    ByteBuffer b = ByteBuffer.allocate((int) size);
                    records = readFully(ch, b, at + RECORD) ? b.array() : null;
                }
                if (!extension(type) && nextSize >= 0) {
                    size = nextSize;
                    nextSize = -1;
                    if (size > length - at - RECORD) {
                        return new Walked(End.NOT_A_HEADER, at);
                    }
                }
                if (!visitor.visit(new Header(at, type, size, records))) {
                    return new Walked(End.STOPPED, at);
                }
                if (type == 'x' && records != null) {
                    nextSize = paxSize(records);
                }
                at += RECORD + (size + RECORD - 1) / RECORD * RECORD;
            }
        }
    }

    /** A header that describes the next one rather than a member: PAX ('x', 'g'), GNU long names ('L', 'K'). */
    private static boolean extension(byte type) {
        return type == 'x' || type == 'g' || type == 'L' || type == 'K';
    }

    /** The ustar size field (octal, or GNU's base-256), or -1 if it is neither. */
    private static long size(byte[] header) {
        try {
            return TarUtils.parseOctalOrBinary(header, 124, 12);
        } catch (IllegalArgumentException e) {
            return -1;
        }
    }

    /**
     * The value of the last PAX {@code size=} record in an extended header's data ("LEN
     * size=VALUE\n", LEN counting bytes; a later record of a keyword wins, as tar readers have it),
     * or -1 if there is none, or a record is malformed before it.
     */
    static long paxSize(byte[] r) {
        long last = -1;
        int at = 0;
        while (at < r.length) {
            int space = at;
            long len = 0;
            for (; space < r.length && r[space] != ' '; space++) {
                if (r[space] < '0' || r[space] > '9' || (len = len * 10 + (r[space] - '0')) > r.length) {
                    return -1;
                }
            }
            if (space == at || space >= r.length || len <= space - at + 1 || at + len > r.length
                    || r[(int) (at + len - 1)] != '\n') {
                return last;
            }
            int end = (int) (at + len - 1);
            if (startsWith(r, space + 1, "size=")) {
                long size = 0;
                int from = space + 6;
                boolean digits = from < end;
                for (int i = from; i < end && digits; i++) {
                    if (r[i] < '0' || r[i] > '9' || size > (Long.MAX_VALUE - 9) / 10) {
                        digits = false;
                    } else {
                        size = size * 10 + (r[i] - '0');
                    }
                }
                last = digits ? size : -1;
            }
            at = (int) (at + len);
        }
        return last;
    }

    private static boolean startsWith(byte[] b, int at, String ascii) {
        if (at + ascii.length() > b.length) {
            return false;
        }
        for (int i = 0; i < ascii.length(); i++) {
            if (b[at + i] != ascii.charAt(i)) {
                return false;
            }
        }
        return true;
    }

    static boolean checksumMatches(byte[] header) {
        try {
            return TarUtils.verifyCheckSum(header);
        } catch (IllegalArgumentException e) {
            return false; // the checksum field is not octal
        }
    }

    static boolean allZero(byte[] b) {
        return allZero(b, 0, b.length);
    }

    static boolean allZero(byte[] b, int from, int to) {
        for (int i = from; i < to; i++) {
            if (b[i] != 0) {
                return false;
            }
        }
        return true;
    }

    private static boolean readFully(FileChannel ch, ByteBuffer b, long at) throws IOException {
        while (b.hasRemaining()) {
            if (ch.read(b, at + b.position()) <= 0) {
                return false;
            }
        }
        return true;
    }
}
