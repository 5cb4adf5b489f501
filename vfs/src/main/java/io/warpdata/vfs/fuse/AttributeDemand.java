package io.warpdata.vfs.fuse;

import io.warpdata.vfs.WarpTree;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * Whether a READDIRPLUS listing of member files (and of tensor files, whose inodes are computed
 * too: their folder stands for the artifact below) hands the kernel their inodes and attributes,
 * or their names, types and inode numbers alone: per artifact, by whether its members were
 * looked up in the last {@link #WINDOW_SECONDS}, or read in the last {@link #READ_WINDOW_SECONDS}.
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
 * <p>An artifact whose members are being <em>read</em> lists full for longer: a reader opens
 * every file it reads, so the kernel builds those inodes anyway, and an entry that comes with its
 * inode spares the open its LOOKUP round trip. That is the next {@code ImageFolder} scan over the
 * same images (a second training run, or an epoch after memory pressure dropped the dentries):
 * measured on 5,000 images, warm, page cache dropped, 5,000 LOOKUPs a pass fewer and the pass
 * 1.18-1.31 s (median 1.27) against 1.16-1.51 s (median 1.35). A {@code find} over such an
 * artifact within the window pays the full listing's price (docs/mount.md).
 *
 * <p>Thread-safe; one clock read per member lookup, per member READ and per listing chunk.
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

    /**
     * How long after a member read the artifact's listings stay full: long enough for the next
     * run or epoch over the same files to start, short enough that a {@code find} long after
     * training lists bare again.
     */
    static final long READ_WINDOW_SECONDS = 600;

    private final LongSupplier nanoClock;
    private final ConcurrentHashMap<Long, AtomicLong> lastLookup = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<Long, AtomicLong> lastRead = new ConcurrentHashMap<>();
    /** The artifact read last and its clock: a read of the same artifact touches no map and allocates nothing. */
    private volatile Recent recent;

    private record Recent(long artifact, AtomicLong at) {
    }

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

    /** A READ of member inode {@code memberInode} (on the FUSE read path: no lock, no allocation for the same artifact). */
    void read(long memberInode) {
        long now = nanoClock.getAsLong();
        long artifact = WarpTree.artifactOfComputedInode(memberInode);
        Recent r = recent;
        if (r == null || r.artifact() != artifact) {
            r = new Recent(artifact, lastRead.computeIfAbsent(artifact, k -> new AtomicLong(now)));
            recent = r;
        }
        AtomicLong at = r.at();
        // Once a second is enough for a 10-minute window, and spares the FUSE threads a shared write per read.
        if (now - at.getPlain() >= TimeUnit.SECONDS.toNanos(1)) {
            at.setRelease(now);
        }
    }

    /** Whether a listing should hand out the inode and attributes of member {@code memberInode} (and its artifact's other members). */
    boolean wanted(long memberInode) {
        Long artifact = WarpTree.artifactOfComputedInode(memberInode);
        long now = nanoClock.getAsLong();
        AtomicLong looked = lastLookup.get(artifact);
        if (looked != null && now - looked.get() < TimeUnit.SECONDS.toNanos(WINDOW_SECONDS)) {
            return true;
        }
        AtomicLong read = lastRead.get(artifact);
        return read != null && now - read.get() < TimeUnit.SECONDS.toNanos(READ_WINDOW_SECONDS);
    }
}
