package io.warpdata.blobcache.cache;

import io.warpdata.store.StoreException;
import io.warpdata.store.StoreUnavailableException;
import io.warpdata.manifest.WarpException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/** Waiting on another thread's fetch without ever waiting past a read's deadline. */
final class Deadlines {
    private Deadlines() {
    }

    /**
     * The result of {@code f}, waiting at most until {@code deadlineNanos}.
     *
     * @throws StoreUnavailableException on timeout or interruption
     * @throws WarpException the fetch's own typed failure, rethrown as is
     */
    static <T> T await(CompletableFuture<T> f, long deadlineNanos, Supplier<String> what) {
        try {
            return f.get(Math.max(deadlineNanos - System.nanoTime(), 0), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            return timeout(what);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StoreUnavailableException("Interrupted while " + what.get(), e);
        } catch (ExecutionException | CompletionException e) {
            throw rethrow(e.getCause() == null ? e : e.getCause());
        }
    }

    private static <T> T timeout(Supplier<String> what) {
        throw new StoreUnavailableException("Timed out " + what.get() + " (read deadline passed)", null);
    }

    /** A future's failure as its task threw it: without the CompletionException wrapping it (null stays null). */
    static Throwable unwrap(Throwable t) {
        return t instanceof CompletionException && t.getCause() != null ? t.getCause() : t;
    }

    /** Unwraps a failure from another thread into an exception fit to throw here. */
    static RuntimeException rethrow(Throwable t) {
        t = unwrap(t);
        if (t instanceof RuntimeException r) {
            return r;
        }
        if (t instanceof Error err) {
            throw err;
        }
        return new StoreException("Unexpected failure: " + t, "This is a bug in warpd; please report it.", t);
    }
}
