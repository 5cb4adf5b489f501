package io.warpdata.daemon.publish;

import io.warpdata.manifest.MemberIndex;

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
        return MemberIndex.compare(a.getBytes(StandardCharsets.UTF_8), b.getBytes(StandardCharsets.UTF_8));
    }
}
