package io.warpdata.vfs.fuse;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.LongAdder;

/** Requests the kernel sent, counted by opcode: how many round trips a workload cost. */
final class RequestCounts {
    /** By opcode: the protocol's opcodes below 64; CUSE and newer ones share the last. */
    private final LongAdder[] counts = new LongAdder[64];

    RequestCounts() {
        for (int i = 0; i < counts.length; i++) {
            counts[i] = new LongAdder();
        }
    }

    /** Counts one request. */
    void count(int opcode) {
        counts[opcode >>> 6 == 0 ? opcode : counts.length - 1].increment();
    }

    /** Counts by request name ({@link FuseAbi#opName}), only of requests sent at least once. */
    Map<String, Long> byName() {
        Map<String, Long> out = new TreeMap<>();
        for (int op = 0; op < counts.length; op++) {
            long n = counts[op].sum();
            if (n > 0) {
                out.merge(FuseAbi.opName(op), n, Long::sum);
            }
        }
        return out;
    }
}
