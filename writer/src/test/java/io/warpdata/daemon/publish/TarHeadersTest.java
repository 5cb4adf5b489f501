package io.warpdata.daemon.publish;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The header walker, on tars written by Python's tarfile. */
class TarHeadersTest {
    @TempDir
    Path tmp;

    private void python(String script, String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("/usr/bin/python3", "-c", script));
        cmd.addAll(List.of(args));
        Process py = new ProcessBuilder(cmd).inheritIO().start();
        assertThat(py.waitFor()).isZero();
    }

    private static List<TarHeaders.Header> headers(Path tar, List<TarHeaders.Walked> ended) throws IOException {
        List<TarHeaders.Header> seen = new ArrayList<>();
        ended.add(TarHeaders.walk(tar, seen::add));
        return seen;
    }

    /**
     * A member of 8 GiB or more has 0 in its ustar size field and its size in a PAX {@code size=}
     * record (tarfile.py's create_pax_header). Written here at 1/3,000,000 of that: tarfile
     * writes the member with a {@code size} PAX record, and its ustar field is set to 0 with the
     * checksum made again by tarfile's own calc_chksums, as it does for a member too large for it.
     */
    @Test
    void aPaxSizeRecordGivesTheSizeOfTheMemberItPrecedes() throws Exception {
        Path tar = tmp.resolve("pax.tar");
        python("""
                import io, sys, tarfile
                with tarfile.open(sys.argv[1], 'w', format=tarfile.PAX_FORMAT) as t:
                    big = tarfile.TarInfo('dir/b\u00fcg.bin'); big.size = 3000
                    big.pax_headers = {'comment': '\u00e9t\u00e9 ' * 5, 'size': '3000'}
                    t.addfile(big, io.BytesIO(b'z' * 3000))
                    for n in ('a.jpg', 'b.jpg'):
                        ti = tarfile.TarInfo(n); ti.size = 10; t.addfile(ti, io.BytesIO(b'y' * 10))
                raw = bytearray(open(sys.argv[1], 'rb').read())
                # the member's own header follows its PAX header (a header record and its padded records)
                pax_size = int(raw[124:136].rstrip(b'\\0 ').decode(), 8)
                at = 512 + (pax_size + 511) // 512 * 512
                assert raw[at + 156:at + 157] == b'0', raw[at + 156:at + 157]
                raw[at + 124:at + 136] = b'%011o\\0' % 0
                raw[at + 148:at + 156] = b' ' * 8
                raw[at + 148:at + 156] = b'%06o\\0 ' % tarfile.calc_chksums(bytes(raw[at:at + 512]))[0]
                open(sys.argv[1], 'wb').write(raw)
                """, tar.toString());
        List<TarHeaders.Walked> ended = new ArrayList<>();
        List<TarHeaders.Header> seen = headers(tar, ended);
        assertThat(seen).extracting(h -> (char) h.type()).containsExactly('x', '0', '0', '0');
        assertThat(seen.get(0).pax()).contains("size=3000", "\u00e9t\u00e9");
        assertThat(seen.get(1).size()).as("from its PAX record, not its ustar field (0)").isEqualTo(3000);
        assertThat(seen).filteredOn(TarHeaders.Header::regularFile).hasSize(3);
        assertThat(ended).singleElement().extracting(TarHeaders.Walked::end).isEqualTo(TarHeaders.End.ZEROS);
    }

    @Test
    void theWalkStopsQuietlyAtWhatIsNotAHeaderAndWhenTheVisitorSaysSo() throws Exception {
        Path tar = tmp.resolve("plain.tar");
        python("""
                import io, sys, tarfile
                with tarfile.open(sys.argv[1], 'w', format=tarfile.GNU_FORMAT) as t:
                    for i in range(5):
                        ti = tarfile.TarInfo('c/' + 'long' * 40 + '%d' % i); ti.size = 700; t.addfile(ti, io.BytesIO(b'q' * 700))
                """, tar.toString());
        List<TarHeaders.Walked> ended = new ArrayList<>();
        assertThat(headers(tar, ended)).extracting(h -> (char) h.type()).containsExactly('L', '0', 'L', '0', 'L', '0', 'L', '0', 'L', '0');
        assertThat(ended.get(0).end()).isEqualTo(TarHeaders.End.ZEROS);

        int[] n = {0};
        assertThat(TarHeaders.walk(tar, h -> ++n[0] < 3).end()).isEqualTo(TarHeaders.End.STOPPED);
        assertThat(n[0]).isEqualTo(3);

        byte[] bytes = Files.readAllBytes(tar);
        Files.write(tmp.resolve("cut.tar"), java.util.Arrays.copyOf(bytes, 3000));
        ended.clear();
        List<TarHeaders.Header> cut = headers(tmp.resolve("cut.tar"), ended);
        assertThat(cut).hasSizeLessThan(10);
        assertThat(ended.get(0).end()).isIn(TarHeaders.End.NOT_A_HEADER, TarHeaders.End.END_OF_FILE);

        // A size field in GNU's base-256 far beyond the file (and beyond a long once padded): no overflow, a stop.
        byte[] huge = bytes.clone();
        // the second member's header (after the first 'L' and its name record): Long.MAX_VALUE in base-256
        byte[] max = {(byte) 0x80, 0, 0, 0, 0x7F, -1, -1, -1, -1, -1, -1, -1};
        System.arraycopy(max, 0, huge, 1024 + 124, 12);
        fixChecksum(huge, 1024);
        Files.write(tmp.resolve("huge.tar"), huge);
        ended.clear();
        assertThat(headers(tmp.resolve("huge.tar"), ended)).hasSize(1);
        assertThat(ended.get(0)).isEqualTo(new TarHeaders.Walked(TarHeaders.End.NOT_A_HEADER, 1024));

        Files.write(tmp.resolve("text.tar"), "not a tar".repeat(200).getBytes(StandardCharsets.UTF_8));
        ended.clear();
        assertThat(headers(tmp.resolve("text.tar"), ended)).isEmpty();
        assertThat(ended.get(0).end()).isEqualTo(TarHeaders.End.NOT_A_HEADER);
    }

    private static void fixChecksum(byte[] b, int at) {
        java.util.Arrays.fill(b, at + 148, at + 156, (byte) ' ');
        long sum = 0;
        for (int i = 0; i < 512; i++) {
            sum += b[at + i] & 0xFF;
        }
        byte[] field = String.format("%06o\0 ", sum).getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(field, 0, b, at + 148, 8);
    }

    @Test
    void paxSizeReadsTheRecordByItsByteLengths() {
        // "LEN key=value\n", LEN in bytes: a path of 2-byte characters before the size.
        String path = "path=\u00fc\u00fc\u00fc\n";
        int pathLen = path.getBytes(StandardCharsets.UTF_8).length;
        String rec = (pathLen + 3) + " " + path + "17 size=12345678\n";
        assertThat(TarHeaders.paxSize(rec.getBytes(StandardCharsets.UTF_8))).isEqualTo(12345678L);
        assertThat(TarHeaders.paxSize("11 mtime=1\n".getBytes(StandardCharsets.UTF_8))).isEqualTo(-1);
        assertThat(TarHeaders.paxSize("11 size=-3\n".getBytes(StandardCharsets.UTF_8))).isEqualTo(-1);
        assertThat(TarHeaders.paxSize("99 size=3\n".getBytes(StandardCharsets.UTF_8))).as("a length past the end").isEqualTo(-1);
        assertThat(TarHeaders.paxSize("".getBytes(StandardCharsets.UTF_8))).isEqualTo(-1);
        // A later record of a keyword wins, as tar readers have it (commons-compress, GNU tar).
        assertThat(TarHeaders.paxSize("10 size=3\n11 size=40\n".getBytes(StandardCharsets.UTF_8))).isEqualTo(40);
        assertThat(TarHeaders.paxSize("11 size=40\n6 x=1\n".getBytes(StandardCharsets.UTF_8))).isEqualTo(40);
    }
}
