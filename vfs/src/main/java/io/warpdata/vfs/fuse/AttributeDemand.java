package io.warpdata.vfs.fuse;

import io.warpdata.vfs.WarpTree;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * Whether a READDIRPLUS listing of member files hands the kernel their inodes and attributes,
 * or their names, types and inode numbers alone: per artifact, by whether its members were
 * looked up in the last {@link #WINDOW_SECONDS}.
 *
 * <p>Why: an entry with a node id makes the kernel build an inode and a dentry for it (about
 * 1.1 KB of slab each: 1.4 GB and most of a cold {@code find}'s time for ImageNet's 1.28M
 * members), which a walk that only reads names and types ({@code find -type f}, {@code os.walk},
 * {@code ImageFolder}'s scan) never uses. An entry with node id 0 is only a dirent (the kernel
 * skips it: "the userspace filesystem did not want to return attributes/handle for this entry",
 * fs/fuse/readdir.c); its inode number is still the member's computed one, so a later LOOKUP
 * (an {@code lstat}, an {@code open}) gives the same number. A listing that does stat its
 * entries ({@code ls -l}, {@code du}, {@code os.scandir}+{@code stat}) pays one LOOKUP per entry
 * of the first chunk it lists bare; those lookups switch the artifact's listings to full entries
 * for as long as lookups keep coming, so the rest of the walk needs none.
 *
 * <p>Thread-safe; one clock read per member lookup and per listing chunk.
 */
final class AttributeDemand {
    /**
     * How long after a member lookup the artifact's listings stay full. {@code ls -l} and
     * {@code os.scandir}+stat stat each chunk of entries before they ask for the next (128 KiB,
     * ~745 members), so the window only has to span one chunk's stats and the next request,
     * milliseconds, with room for a loaded machine. A {@code find} started within the window
     * of members being looked up (a reader opening files) lists full, at the old price (at
     * 200,000 members 0.70 s instead of 0.24 s); two seconds after an {@code ls -l} it is bare.
     */
    static final long WINDOW_SECONDS = 2;

    private final LongSupplier nanoClock;
    private final ConcurrentHashMap<Long, AtomicLong> lastLookup = new ConcurrentHashMap<>();

    /** @param nanoClock monotonic nanoseconds ({@code System::nanoTime}) */
    AttributeDemand(LongSupplier nanoClock) {
        this.nanoClock = nanoClock;
    }

    /** A LOOKUP answered with member inode {@code memberInode}. */
    void lookedUp(long memberInode) {
        long now = nanoClock.getAsLong();
        Long artifact = WarpTree.artifactOfComputedInode(memberInode);
        AtomicLong at = lastLookup.get(artifact);
        if (at == null) {
            at = lastLookup.computeIfAbsent(artifact, k -> new AtomicLong(now));
        }
        at.set(now);
    }

    /** Whether a listing should hand out the inode and attributes of member {@code memberInode} (and its artifact's other members). */
    boolean wanted(long memberInode) {
        AtomicLong at = lastLookup.get(WarpTree.artifactOfComputedInode(memberInode));
        return at != null && nanoClock.getAsLong() - at.get() < TimeUnit.SECONDS.toNanos(WINDOW_SECONDS);
    }
}
