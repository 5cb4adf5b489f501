package io.warpdata.manifest;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * Footprint of a 1,000,000-member index (paths like {@code class_0123/img_0001234.jpg}).
 * Asserts only the deterministic part, heap retained per member computed from array sizes
 * (target under 200 bytes); load time is printed, not asserted (shared build machines).
 */
class MemberIndexFootprintTest {
    private static final int CLASSES = 1000;
    private static final int PER_CLASS = 1000;

    @Test
    void millionMemberIndexStaysUnder200BytesPerMember() {
        int n = CLASSES * PER_CLASS;
        long t0 = System.nanoTime();
        MemberIndexBuilder builder = new MemberIndexBuilder();
        byte[] digest = new byte[32];
        BlobId hash = BlobId.fromDigest(digest);
        StringBuilder sb = new StringBuilder(32);
        int member = 0;
        for (int c = 0; c < CLASSES; c++) {
            for (int i = 0; i < PER_CLASS; i++, member++) {
                sb.setLength(0);
                sb.append("class_");
                pad(sb, c, 4);
                sb.append("/img_");
                pad(sb, member, 7);
                sb.append(".jpg");
                builder.add(sb.toString(), c / 100, (long) i * 110_000 + 512, 110_000 - 512, 0644, hash);
            }
        }
        MemberIndex built = builder.build();
        builder = null;
        long t1 = System.nanoTime();
        byte[] bytes = built.serialize();
        long retained = built.retainedBytes();
        built = null;

        long bestParse = Long.MAX_VALUE;
        long firstParse = 0;
        long heapDelta = 0;
        MemberIndex index = null;
        for (int run = 0; run < 3; run++) {
            index = null;
            long before = usedAfterGc();
            long s = System.nanoTime();
            index = MemberIndex.parse(bytes, "footprint");
            long took = System.nanoTime() - s;
            heapDelta = usedAfterGc() - before;
            if (run == 0) {
                firstParse = took;
            }
            bestParse = Math.min(bestParse, took);
        }

        double perMember = (double) retained / n;
        System.out.printf("MemberIndex footprint: %d members, serialized %d bytes (%.1f/member), build %d ms, "
                        + "parse first %d ms / best of 3 %d ms, retained %d bytes = %.1f bytes/member "
                        + "(measured heap delta after GC: %.1f bytes/member)%n",
                n, bytes.length, (double) bytes.length / n, (t1 - t0) / 1_000_000, firstParse / 1_000_000,
                bestParse / 1_000_000, retained, perMember, (double) heapDelta / n);

        assertThat(index.size()).isEqualTo(n);
        assertThat(index.find("class_0123/img_0123456.jpg")).isEqualTo(123_456);
        assertThat(index.range("class_0999")).containsExactly(999_000, 1_000_000);
        assertThat(index.retainedBytes()).isEqualTo(retained);
        assertThat(perMember).isLessThan(200);
    }

    private static void pad(StringBuilder sb, int v, int width) {
        String s = Integer.toString(v);
        for (int k = s.length(); k < width; k++) {
            sb.append('0');
        }
        sb.append(s);
    }

    private static long usedAfterGc() {
        Runtime rt = Runtime.getRuntime();
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        return rt.totalMemory() - rt.freeMemory();
    }
}
