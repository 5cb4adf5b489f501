package io.warpdata.daemon.publish;

import java.nio.charset.StandardCharsets;
import java.util.Comparator;

/**
 * Member paths in <em>component order</em>: UTF-8 bytes compared unsigned, except that '/' sorts
 * before every other byte. All members under one directory then form one contiguous run, the
 * order {@link io.warpdata.manifest.MemberIndex} keeps, so packed shards read sequentially when
 * a directory is walked.
 */
public final class ComponentOrder implements Comparator<String> {
    public static final ComponentOrder INSTANCE = new ComponentOrder();

    private ComponentOrder() {
    }

    @Override
    public int compare(String a, String b) {
        byte[] x = a.getBytes(StandardCharsets.UTF_8);
        byte[] y = b.getBytes(StandardCharsets.UTF_8);
        int n = Math.min(x.length, y.length);
        for (int i = 0; i < n; i++) {
            int c = Integer.compare(rank(x[i]), rank(y[i]));
            if (c != 0) {
                return c;
            }
        }
        return Integer.compare(x.length, y.length);
    }

    private static int rank(byte b) {
        return b == '/' ? -1 : b & 0xff;
    }
}
