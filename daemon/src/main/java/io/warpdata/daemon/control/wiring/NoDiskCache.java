package io.warpdata.daemon.control.wiring;

import io.warpdata.blobcache.BlobReader;
import io.warpdata.daemon.control.ControlException;
import io.warpdata.daemon.control.ops.CacheControl;
import io.warpdata.manifest.BlobRef;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.OptionalLong;
import java.util.function.BooleanSupplier;
import java.util.function.LongConsumer;

/** {@link CacheControl} for a daemon whose reader keeps nothing on disk: stats only. */
public final class NoDiskCache implements CacheControl {
    private final BlobReader reader;

    public NoDiskCache(BlobReader reader) {
        this.reader = reader;
    }

    private static ControlException none(String what) {
        return new ControlException(ControlException.UNSUPPORTED, "warpd keeps no disk cache (mode remote), so there is nothing to " + what,
                "restart warpd with --mode auto or hybrid to use the disk cache");
    }

    @Override
    public Map<String, Object> stats() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("mode", "remote");
        m.put("size_bytes", 0L);
        m.put("counters", reader.metrics().snapshot());
        return m;
    }

    @Override
    public GcResult gc(OptionalLong limit) {
        throw none("gc");
    }

    @Override
    public VerifyResult verify(LongConsumer progress, BooleanSupplier cancelled) {
        throw none("verify");
    }

    @Override
    public WarmResult warm(BlobRef blob, long maxBytes, LongConsumer progress, BooleanSupplier cancelled) {
        throw none("warm");
    }
}
