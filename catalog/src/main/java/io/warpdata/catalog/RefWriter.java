package io.warpdata.catalog;

import io.warpdata.store.BlobNotFoundException;
import io.warpdata.store.BlobStore;
import io.warpdata.store.PointerMovedException;
import io.warpdata.store.StoreLayout;
import io.warpdata.store.Versioned;

import io.warpdata.manifest.DatasetId;
import io.warpdata.manifest.DatasetRef;
import io.warpdata.manifest.VersionHash;

import java.time.Clock;
import java.util.Optional;

/**
 * Writes the catalog's pointers: moves branches (latest, the default branch, included) and
 * writes and deletes tags, each a compare-and-swap on the pointer object
 * ({@link BlobStore#putIfUnchanged}) based on the pointer as the store holds it now, read past
 * every cache. What it writes it records in the {@link CatalogCache}, so this process reads
 * its own writes at once.
 */
final class RefWriter {
    private final Catalog catalog;
    private final BlobStore store;
    private final CatalogCache cache;
    private final Clock clock;

    /**
     * @param catalog checks that a version is published, and names what exists when a ref is not found
     */
    RefWriter(Catalog catalog, BlobStore store, CatalogCache cache, Clock clock) {
        this.catalog = catalog;
        this.store = store;
        this.cache = cache;
        this.clock = clock;
    }

    /** See {@link Catalog#moveBranch}. */
    boolean moveBranch(DatasetId id, String branch, VersionHash version, String by, Catalog.Head from) {
        catalog.requirePublished(id, version);
        String key;
        if (branch == null) {
            key = StoreLayout.latest(id);
        } else {
            requireBranchName(id, branch);
            key = StoreLayout.branch(id, branch);
        }
        Catalog.Head now = from != null ? from : head(key);
        if (now.version().equals(Optional.of(version))) {
            return false;
        }
        String written;
        try {
            written = write(key, version, by, now.tag());
        } catch (PointerMovedException e) {
            Catalog.Head then = head(key);
            String what = branch == null ? "latest of " + id : "branch " + id + "@" + branch;
            throw new PointerMovedException(what + " was moved by someone else meanwhile"
                    + then.version().map(v -> " (it names " + v.shortHex(16) + " now)").orElse(" (it is deleted now)")
                    + "; nothing was written", "Run the command again: it reads the pointer as it is now and moves it"
                    + " from there.", e);
        }
        if (branch != null && now.version().isEmpty()) {
            yieldIfBoth(id, branch, key, StoreLayout.tag(id, branch), "branch", written);
        }
        return true;
    }

    /** See {@link Catalog#requireBranchName}. */
    void requireBranchName(DatasetId id, String branch) {
        requireNewRefName(id, branch);
        if (head(StoreLayout.tag(id, branch)).version().isPresent()) {
            throw new RefExistsException(id + "@" + branch + " is a tag, so it cannot be a branch too"
                    + " (tags and branches share one namespace)", "Pick another branch name.");
        }
    }

    /** See {@link Catalog#requireTagFree}; returns the tag's head as read. */
    Catalog.Head requireTagFree(DatasetId id, String tag, Optional<VersionHash> version, boolean force) {
        requireNewRefName(id, tag);
        if (head(StoreLayout.branch(id, tag)).version().isPresent()) {
            throw new RefExistsException(id + "@" + tag + " is a branch, so it cannot be a tag too"
                    + " (tags and branches share one namespace)", "Pick another tag name.");
        }
        Catalog.Head now = head(StoreLayout.tag(id, tag));
        if (now.version().isPresent() && !force && !now.version().equals(version)) {
            throw new RefExistsException("Tag " + id + "@" + tag + " already names version "
                    + now.version().get().shortHex(16) + "; tags never move",
                    "Use another tag name, or move the tag: warpctl tag " + id + (version.isPresent()
                            ? "@" + version.get().shortHex(12) : "@VERSION") + " " + tag + " --force (mounts"
                            + " follow within about two pointer TTLs; files already open keep reading the old"
                            + " version).");
        }
        return now;
    }

    /** See {@link Catalog#tag(DatasetId, String, VersionHash, String, boolean)}. */
    boolean tag(DatasetId id, String tag, VersionHash version, String by, boolean force) {
        catalog.requirePublished(id, version);
        Catalog.Head now = requireTagFree(id, tag, Optional.of(version), force);
        String key = StoreLayout.tag(id, tag);
        if (now.version().equals(Optional.of(version))) {
            return false;
        }
        String written;
        try {
            written = write(key, version, by, now.tag());
        } catch (PointerMovedException e) {
            Catalog.Head then = head(key);
            if (now.version().isEmpty() && !force) {
                throw new RefExistsException("Tag " + id + "@" + tag + " was created by someone else meanwhile"
                        + then.version().map(v -> " (it names " + v.shortHex(16) + ")").orElse("") + "; tags never move,"
                        + " so this one was not written", "Use another tag name, or move the tag: warpctl tag " + id
                        + "@" + version.shortHex(12) + " " + tag + " --force.");
            }
            throw new PointerMovedException("Tag " + id + "@" + tag + " was changed by someone else meanwhile"
                    + then.version().map(v -> " (it names " + v.shortHex(16) + " now)").orElse(" (it is deleted now)")
                    + "; this tag was not written", "Run the command again: it reads the tag as it is now.", e);
        }
        if (now.version().isEmpty()) {
            yieldIfBoth(id, tag, key, StoreLayout.branch(id, tag), "tag", written);
        }
        return true;
    }

    /**
     * After creating ref {@code name} (a {@code kind}) at {@code key}: if the other kind of ref of
     * the same name exists now, both writers checked that the name was free before either wrote,
     * and the name would be both. This writer deletes what it wrote (unless it changed since) and
     * fails; when both see each other both fail and neither is kept, so a retry finds it free.
     * A writer that saw no conflict after its write succeeded before the other wrote, and the
     * other one sees it and yields.
     */
    private void yieldIfBoth(DatasetId id, String name, String key, String otherKey, String kind, String written) {
        if (head(otherKey).version().isEmpty()) {
            return;
        }
        try {
            store.deleteIfUnchanged(key, written);
        } catch (PointerMovedException changedSince) {
            // someone moved or deleted it since: theirs to keep or not
        }
        cache.pointed(key, null, null);
        int slash = key.lastIndexOf('/');
        cache.invalidateListing(key.substring(0, slash + 1));
        String other = kind.equals("tag") ? "branch" : "tag";
        throw new RefExistsException(id + "@" + name + " was made a " + other + " by someone else at the same moment;"
                + " a name cannot be both a tag and a branch, so this " + kind + " was removed again",
                "See what is there with: warpctl list-remote " + id + "; then pick another name, or run the command"
                        + " again.");
    }

    /** See {@link Catalog#deleteTag}. */
    VersionHash deleteTag(DatasetId id, String tag) {
        return deleteRef(id, tag, true);
    }

    /** See {@link Catalog#deleteBranch}. */
    VersionHash deleteBranch(DatasetId id, String branch) {
        return deleteRef(id, branch, false);
    }

    /**
     * Deletes tag (or branch) {@code name} of {@code id}, compare-and-swap on its pointer as read
     * now; returns the version it named. A name that is the other kind of ref is refused, naming
     * the command that deletes that one.
     */
    private VersionHash deleteRef(DatasetId id, String name, boolean tag) {
        String kind = tag ? "tag" : "branch";
        String other = tag ? "branch" : "tag";
        DatasetRef.requireRefName(kind, name);
        String key = tag ? StoreLayout.tag(id, name) : StoreLayout.branch(id, name);
        Catalog.Head now = head(key);
        if (now.version().isEmpty()) {
            if (head(tag ? StoreLayout.branch(id, name) : StoreLayout.tag(id, name)).version().isPresent()) {
                throw new RefExistsException(id + "@" + name + " is a " + other + ", not a " + kind + "; nothing was deleted",
                        "Delete the " + other + " with: warpctl " + other + " --delete " + id + " " + name);
            }
            throw catalog.refNotFound(id, name);
        }
        store.deleteIfUnchanged(key, now.tag());
        cache.pointed(key, null, null);
        cache.invalidateListing(tag ? StoreLayout.tags(id) : StoreLayout.branches(id));
        return now.version().get();
    }

    /** The pointer at {@code key} as the store holds it now (no cache). */
    Catalog.Head head(String key) {
        Versioned v;
        try {
            v = store.getIfChanged(key, null, BlobStore.POINTER_MAX_BYTES);
        } catch (BlobNotFoundException e) {
            return new Catalog.Head(Optional.empty(), null);
        }
        return new Catalog.Head(Optional.of(PointerCodec.fromJson(v.data(), store.describe() + "/" + key)), v.tag());
    }

    /** Writes the pointer (compare-and-swap on {@code expectedTag}); returns the store's tag of what it wrote. */
    private String write(String key, VersionHash version, String by, String expectedTag) {
        String tag = store.putIfUnchanged(key, PointerCodec.toJson(version, by, clock.instant()), expectedTag);
        cache.pointed(key, version, tag);
        int slash = key.lastIndexOf('/');
        cache.invalidateListing(key.substring(0, slash + 1));
        return tag;
    }

    private static void requireNewRefName(DatasetId id, String name) {
        DatasetRef.requireRefName("ref", name);
        if (name.equals(DatasetRef.LATEST)) {
            throw new RefNameException("'latest' is the default branch's name, so no tag or branch may have it",
                    "Pick another name, e.g. v1 or dev.");
        }
        int shown = id.name().length() + 1 + name.length();
        if (shown > 255) {
            throw new RefNameException("The name '" + name.substring(0, 16) + "...' (" + name.length() + " characters) is"
                    + " too long for " + id + ": the mount would show " + id.name() + "@" + name.substring(0, 16)
                    + "... as a name of " + shown + " characters, and a file name holds at most 255",
                    "Pick a name of at most " + Math.max(0, 255 - 1 - id.name().length()) + " characters.");
        }
    }
}
