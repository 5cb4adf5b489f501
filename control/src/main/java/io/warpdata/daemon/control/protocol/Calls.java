package io.warpdata.daemon.control.protocol;

import java.util.List;

/**
 * Every operation of the control socket, with the records of its request, result and events:
 * the one place both warpctl and warpd take the protocol from (docs/control.md describes it).
 */
public final class Calls {
    public static final Call<Empty, StatusCall.Reply, Empty> STATUS = Call.of("status", Empty.class, StatusCall.Reply.class);
    public static final Call<Empty, StatsCall.Reply, Empty> STATS = Call.of("stats", Empty.class, StatsCall.Reply.class);
    public static final Call<Empty, MetricsCall.Reply, Empty> METRICS = Call.of("metrics", Empty.class, MetricsCall.Reply.class);
    public static final Call<DatasetArg, InfoCall.Reply, Empty> INFO = Call.of("info", DatasetArg.class, InfoCall.Reply.class);
    public static final Call<Empty, CacheCalls.Stats, Empty> CACHE_STATS =
            Call.of("cache.stats", Empty.class, CacheCalls.Stats.class);
    public static final Call<CacheCalls.GcRequest, CacheCalls.GcReply, Empty> CACHE_GC =
            Call.of("cache.gc", CacheCalls.GcRequest.class, CacheCalls.GcReply.class);
    public static final Call<Empty, CacheCalls.VerifyReply, CacheCalls.VerifyProgress> CACHE_VERIFY =
            Call.withProgress("cache.verify", Empty.class, CacheCalls.VerifyReply.class, CacheCalls.VerifyProgress.class);
    public static final Call<WarmCall.Request, WarmCall.Reply, WarmCall.Progress> WARM =
            Call.withProgress("warm", WarmCall.Request.class, WarmCall.Reply.class, WarmCall.Progress.class);
    public static final Call<TableBatchesCall.Request, TableBatchesCall.Reply, TableBatchesCall.Batch> TABLE_BATCHES =
            new Call<>("table.batches", TableBatchesCall.Request.class, TableBatchesCall.Reply.class,
                    TableBatchesCall.Batch.class, Events.BATCH);
    public static final Call<RefreshCall.Request, RefreshCall.Reply, Empty> REFRESH =
            Call.of("refresh", RefreshCall.Request.class, RefreshCall.Reply.class);
    public static final Call<PublishCall.Request, PublishCall.Reply, PublishCall.Progress> PUBLISH =
            Call.withProgress("publish", PublishCall.Request.class, PublishCall.Reply.class, PublishCall.Progress.class);
    public static final Call<PrefetchOrderCall.Request, PrefetchOrderCall.Reply, Empty> PREFETCH_ORDER =
            Call.of("prefetch.order", PrefetchOrderCall.Request.class, PrefetchOrderCall.Reply.class);

    /** All of them, in the order docs/control.md lists them. */
    public static final List<Call<?, ?, ?>> ALL = List.of(STATUS, STATS, METRICS, INFO, CACHE_STATS, CACHE_GC,
            CACHE_VERIFY, WARM, TABLE_BATCHES, REFRESH, PUBLISH, PREFETCH_ORDER);

    private Calls() {
    }
}
