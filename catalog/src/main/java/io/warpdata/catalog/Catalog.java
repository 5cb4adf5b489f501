package io.warpdata.catalog;

import io.warpdata.store.BlobNotFoundException;
import io.warpdata.store.BlobStore;
import io.warpdata.store.PointerMovedException;
import io.warpdata.store.StoreException;
import io.warpdata.store.StoreLayout;
import io.warpdata.store.StoreUnavailableException;

import com.github.benmanes.caffeine.cache.Ticker;
import io.warpdata.manifest.DatasetId;
import io.warpdata.manifest.DatasetRef;
import io.warpdata.manifest.Manifest;
import io.warpdata.manifest.ManifestCodec;
import io.warpdata.manifest.ManifestCorruptedException;
import io.warpdata.manifest.ManifestValidationException;
import io.warpdata.manifest.VersionHash;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The remote catalog: dataset ids -> versions -> manifests, read from a {@link BlobStore} laid
 * out as {@link StoreLayout} says. Manifests are immutable and cached for ever (verified against
 * their hash once); pointers (latest, branches) and listings are re-read after a TTL, and
 * "nothing there" answers after a shorter one so that a fresh publish shows up quickly
 * ({@link CatalogCache}). A pointer is re-read with a conditional GET
 * ({@link BlobStore#getIfChanged}): one tiny request, answered 304 when nothing moved; a LIST
 * happens only when something is listed. Tags and branches are written by {@link RefWriter}.
 *
 * <p>Every answer the store gives is also kept in {@link LastKnownGood} (on disk in warpd), and
 * when the store does not answer ({@link StoreUnavailableException}: unreachable, timeouts, 5xx
 * after its retries) the last known good answer is served instead (stale-if-error), so lookups
 * and listings keep working through an outage and after a restart without the store. Such
 * answers are counted ({@link #staleAnswers()}) and trusted for one TTL like fresh ones.
 *
 * <p>Thread-safe. Loads happen outside the caches' locks (two threads may both fetch the same
 * pointer; both get the same answer), so a slow store never blocks lookups of other keys.
 */
public final class Catalog {
    private static final Pattern VERSION_FILE = Pattern.compile("^[0-9a-f]{64}\\.json$");
    private static final String POINTER_SUFFIX = ".json";

    private final BlobStore store;
    private final Manifests manifests;
    private final CatalogCache cache;
    private static final Logger LOG = LoggerFactory.getLogger(Catalog.class);
    private final RefWriter refs;
    /** Datasets under names today's rules refuse, logged once each (at most 100). */
    private final Set<String> refusedNamesLogged = ConcurrentHashMap.newKeySet();
    private final LastKnownGood known;
    private final NotFound notFound = new NotFound(this);

    /**
     * Cache settings.
     *
     * @param pointerTtl how long a pointer (latest, a branch, a tag) or a non-empty listing is trusted
     *        (2 s by default, for short-lived clients: a publish shows up within a couple of
     *        seconds; warpd passes its {@code --pointer-ttl}, 30 s, to keep a fleet's requests low)
     * @param negativeTtl how long "no such pointer" / an empty listing is trusted (1 s)
     * @param maxManifests manifests kept in memory (each is small; versions are immutable)
     * @param revalidateWait how long a lookup waits for a pointer or listing past its TTL to be
     *        re-read before it takes the last known answer, the re-read going on in the background
     *        (0.5 s: a store answers such a request in tens of milliseconds; one that takes longer
     *        is in trouble, and a mount must not wait for it)
     * @param answerWait how long a lookup waits for the store when nothing is known yet (10 s: the
     *        store's own answer timeout, 5 s, ends a silent request first; this bounds a store
     *        that answers only with errors to retry)
     */
    public record Config(Duration pointerTtl, Duration negativeTtl, long maxManifests, Duration revalidateWait,
                         Duration answerWait) {
        public Config {
            if (pointerTtl.isNegative() || negativeTtl.isNegative() || maxManifests < 1 || revalidateWait.isNegative()
                    || answerWait.isNegative()) {
                throw new IllegalArgumentException("TTLs and waits must be >= 0 and maxManifests >= 1");
            }
        }

        /** Pointers trusted 2 s, negative answers 1 s, 1024 manifests, 0.5 s to revalidate, 10 s for a first answer. */
        public static Config defaults() {
            return new Config(Duration.ofSeconds(2), Duration.ofSeconds(1), 1024, Duration.ofMillis(500),
                    Duration.ofSeconds(10));
        }

        /** The same settings with another pointer TTL. */
        public Config withPointerTtl(Duration ttl) {
            return new Config(ttl, negativeTtl, maxManifests, revalidateWait, answerWait);
        }

        /** The same settings with other waits for the store. */
        public Config withWaits(Duration revalidate, Duration answer) {
            return new Config(pointerTtl, negativeTtl, maxManifests, revalidate, answer);
        }
    }

    /** A catalog keeping its last known good state in memory only (one-shot commands, tests). */
    public Catalog(BlobStore store) {
        this(store, Config.defaults(), Ticker.systemTicker());
    }

    /** A catalog with its own cache settings and clock for TTLs, keeping its last known good state in memory. */
    public Catalog(BlobStore store, Config config, Ticker ticker) {
        this(store, config, ticker, LastKnownGood.inMemory(), Clock.systemUTC());
    }

    /**
     * @param known where answers are kept and served from while the store does not answer
     * @param clock stamps the time answers were confirmed
     */
    public Catalog(BlobStore store, Config config, Ticker ticker, LastKnownGood known, Clock clock) {
        this.store = store;
        this.known = known;
        this.manifests = new Manifests(store, known, config.maxManifests());
        this.cache = new CatalogCache(store, config, ticker, known, clock);
        // The writer asks this catalog only from its own methods, never while constructing.
        this.refs = new RefWriter(this, store, cache, clock);
    }

    /** The store this catalog reads. */
    public BlobStore store() {
        return store;
    }

    /**
     * Workspaces in the store, sorted. A folder of the store's {@code datasets/} whose name no
     * dataset id can have ({@code UPPER/}, {@code a b/}, made by hand) is left out: it showed as an
     * empty folder at the mount's root.
     */
    public List<String> workspaces() {
        List<String> out = new ArrayList<>();
        for (String child : cache.list(StoreLayout.DATASETS)) {
            if (child.endsWith("/") && DatasetId.isPart(child.substring(0, child.length() - 1))) {
                out.add(child.substring(0, child.length() - 1));
            }
        }
        return out;
    }

    /**
     * Whether workspace {@code ws} exists: answered from the last known listing when it names
     * the workspace (workspaces are not deleted under a mount), else from a fresh one (a new
     * workspace shows at once). A lookup by name costs no LIST once the workspace is known.
     */
    public boolean hasWorkspace(String ws) {
        return DatasetId.isPart(ws) && (cache.listKnown(StoreLayout.DATASETS).contains(ws + "/") || workspaces().contains(ws));
    }

    /**
     * Starts re-reading, side by side, what listing these datasets needs (their latest pointers,
     * versions, tags and branches) where it is past its TTL: a workspace listing then waits for
     * all of them at once, not for each in turn, and never longer than the revalidation wait
     * when they are known (see {@link CatalogCache}).
     */
    public void prefetch(List<DatasetId> datasets) {
        List<String> pointers = new ArrayList<>();
        List<String> prefixes = new ArrayList<>();
        for (DatasetId id : datasets) {
            pointers.add(StoreLayout.latest(id));
            prefixes.add(StoreLayout.versions(id));
            prefixes.add(StoreLayout.tags(id));
            prefixes.add(StoreLayout.branches(id));
        }
        cache.prefetch(pointers, prefixes);
    }

    /** Datasets of a workspace, sorted. */
    public List<DatasetId> datasets(String workspace) {
        List<DatasetId> out = new ArrayList<>();
        for (String child : cache.list(StoreLayout.workspace(workspace))) {
            if (child.endsWith("/")) {
                try {
                    out.add(new DatasetId(workspace, child.substring(0, child.length() - 1)));
                } catch (ManifestValidationException notADataset) {
                    // A stray directory someone created by hand: not ours to show; or a dataset
                    // an older Warp published under a name today's rules refuse.
                    String name = child.substring(0, child.length() - 1);
                    // INFO: warpd's log has it; warpctl (which runs this too) prints warnings only.
                    if (isRefusedOldName(name) && refusedNamesLogged.size() < 100
                            && refusedNamesLogged.add(workspace + "/" + name)) {
                        LOG.info("the store's folder {}{}/ is not shown: {} (an older Warp accepted such names);"
                                + " README, \"Upgrading\", says how to keep what it holds",
                                StoreLayout.workspace(workspace), name, notADataset.getMessage());
                    }
                }
            }
        }
        return out;
    }

    /**
     * Datasets of a workspace that an older Warp published under names today's rules refuse (a
     * name starting with '-', or longer than {@link DatasetId#MAX_NAME}; a folder with
     * {@code versions/}): they are not shown, and a listing of an otherwise empty workspace says
     * so. One LIST per such folder: for that listing only.
     */
    public List<String> refusedOldNames(String workspace) {
        List<String> out = new ArrayList<>();
        for (String child : cache.list(StoreLayout.workspace(workspace))) {
            String name = child.endsWith("/") ? child.substring(0, child.length() - 1) : "";
            if (isRefusedOldName(name) && cache.list(StoreLayout.workspace(workspace) + child).contains("versions/")) {
                out.add(name);
            }
        }
        return out;
    }

    /** A name the rules before commits 9df35f2 and 3f9deb8 accepted and today's refuse. */
    private static boolean isRefusedOldName(String name) {
        return !DatasetId.isPart(name) && name.matches("^[a-z0-9_-]+$");
    }



    /** Published versions of a dataset, sorted by hash. */
    public List<VersionHash> versions(DatasetId id) {
        List<VersionHash> out = new ArrayList<>();
        for (String child : cache.list(StoreLayout.versions(id))) {
            if (VERSION_FILE.matcher(child).matches()) {
                out.add(new VersionHash(child.substring(0, 64)));
            }
        }
        return out;
    }

    /** Tags of a dataset, sorted by name. */
    public List<String> tags(DatasetId id) {
        return pointerNames(StoreLayout.tags(id));
    }

    /** Branches of a dataset (besides latest, the default branch), sorted by name. */
    public List<String> branches(DatasetId id) {
        return pointerNames(StoreLayout.branches(id));
    }

    private List<String> pointerNames(String prefix) {
        List<String> out = new ArrayList<>();
        for (String child : cache.list(prefix)) {
            if (child.endsWith(POINTER_SUFFIX) && child.indexOf('/') < 0) {
                String name = child.substring(0, child.length() - POINTER_SUFFIX.length());
                try {
                    out.add(DatasetRef.requireRefName("ref", name));
                } catch (ManifestValidationException notARef) {
                    // A stray object someone put there by hand: not a pointer of ours.
                }
            }
        }
        return out;
    }

    /** The latest pointer, if set. */
    public Optional<VersionHash> latest(DatasetId id) {
        return cache.pointer(StoreLayout.latest(id));
    }

    /** The version a tag names, if the tag exists. */
    public Optional<VersionHash> tag(DatasetId id, String tag) {
        return cache.pointer(StoreLayout.tag(id, DatasetRef.requireRefName("tag", tag)));
    }

    /** The version a branch points at, if the branch exists. */
    public Optional<VersionHash> branch(DatasetId id, String branch) {
        return cache.pointer(StoreLayout.branch(id, DatasetRef.requireRefName("branch", branch)));
    }

    /**
     * Which version a ref names, without reading its manifest: the latest pointer, a tag or a
     * branch (tags first: they share one namespace), or the one version a hash prefix matches.
     * This is the one place where refs are resolved; the mount and every command go through it.
     *
     * @throws DatasetNotFoundException naming what exists, if nothing matches
     * @throws AmbiguousVersionException listing the candidates, if more than one version matches
     * @throws ManifestCorruptedException if a pointer is not valid JSON naming a version
     */
    public Located locate(DatasetRef ref) {
        DatasetId id = ref.id();
        return switch (ref.ref()) {
            case DatasetRef.Latest l -> new Located(id, RefKind.LATEST,
                    latest(id).orElseThrow(() -> notFound.noLatest(id)));
            case DatasetRef.Named n -> {
                Optional<VersionHash> tagged = tag(id, n.name());
                if (tagged.isPresent()) {
                    yield new Located(id, RefKind.TAG, tagged.get());
                }
                Optional<VersionHash> branch = branch(id, n.name());
                if (branch.isPresent()) {
                    yield new Located(id, RefKind.BRANCH, branch.get());
                }
                throw notFound.noSuchName(id, n.name());
            }
            case DatasetRef.Version v -> new Located(id, RefKind.VERSION, versionByPrefix(ref, v));
        };
    }

    private VersionHash versionByPrefix(DatasetRef ref, DatasetRef.Version v) {
        if (v.complete()) {
            return new VersionHash(v.prefix());
        }
        DatasetId id = ref.id();
        List<VersionHash> matches = versions(id).stream().filter(h -> h.hex().startsWith(v.prefix())).toList();
        if (matches.isEmpty()) {
            throw notFound.version(id, ref.toString());
        }
        if (matches.size() > 1) {
            throw new AmbiguousVersionException(ref.toString(),
                    matches.stream().map(h -> id + "@" + h.shortHex(16)).toList());
        }
        return matches.get(0);
    }

    /**
     * Resolves a ref ({@link #locate}) and reads the version's verified manifest.
     *
     * @throws DatasetNotFoundException naming what exists, if nothing matches
     * @throws AmbiguousVersionException listing the candidates, if more than one version matches
     * @throws io.warpdata.manifest.ManifestCorruptedException if the manifest fails verification
     */
    public Resolved resolve(DatasetRef ref) {
        Located at = locate(ref);
        return new Resolved(at.id(), at.version(), manifest(at.id(), at.version()), at.kind());
    }

    /**
     * The verified manifest of one version: parsed and validated, its content hashing to the
     * version it is stored under, and naming this dataset. Cached for ever once verified.
     *
     * @throws DatasetNotFoundException if there is no such version
     * @throws ManifestCorruptedException if it fails verification
     */
    public Manifest manifest(DatasetId id, VersionHash version) {
        try {
            return manifests.read(id, version);
        } catch (BlobNotFoundException e) {
            throw notFound.version(id, id + "@" + version.hex());
        }
    }

    /**
     * Publishes a manifest at its version key unless that version already exists (then the
     * stored bytes describe the same content). Call after every blob it names is uploaded.
     *
     * @return the version id
     * @throws StoreException if the write fails
     */
    public VersionHash putVersion(Manifest manifest) {
        VersionHash version = ManifestCodec.version(manifest);
        DatasetId id = manifest.datasetId();
        String key = StoreLayout.version(id, version);
        store.putIfAbsent(key, ManifestCodec.toJson(manifest));
        cache.invalidateListing(StoreLayout.versions(id));
        cache.invalidateListing(StoreLayout.workspace(id.workspace()));
        cache.invalidateListing(StoreLayout.DATASETS);
        return version;
    }

    /**
     * Checks the manifest a version already has in the store as a reader would; one that fails
     * (damaged or edited in the store) is written over with {@code manifest}, which hashes to the
     * same version, and forgotten wherever it was kept. A publish of the same input calls this,
     * so that publishing again repairs what a reader's {@code ManifestCorrupted} told it to.
     *
     * @return true if the stored copy was bad and is now replaced
     * @throws StoreException if it cannot be read or written
     */
    public boolean repairVersion(Manifest manifest) {
        return manifests.repair(manifest);
    }

    /**
     * Moves the latest pointer of {@code id} (the default branch) to {@code version}, which must
     * be published: {@link #moveBranch} with no branch name.
     *
     * @throws DatasetNotFoundException if the version's manifest is not in the store
     * @throws PointerMovedException if someone else moved it meanwhile
     * @throws StoreException if the write fails
     */
    public void setLatest(DatasetId id, VersionHash version) {
        moveBranch(id, null, version, null, null);
    }

    /**
     * Moves a branch ({@code null}: latest, the default branch) to {@code version}, creating it
     * if needed. Compare-and-swap from {@code from}, the head the caller read before its work
     * ({@link #head}; null: the head as it is now): of two publishers that started from the same
     * head exactly one wins (on stores that honour conditional writes; see
     * {@link BlobStore#putIfUnchanged}), the other gets {@link PointerMovedException}.
     *
     * @param by who moves it (kept in the pointer's non-hashed envelope), or null
     * @param from the head the move is based on, or null
     * @return whether the pointer changed (false: it already named {@code version})
     * @throws DatasetNotFoundException if the version's manifest is not in the store
     * @throws RefExistsException if a tag has the branch's name
     * @throws PointerMovedException if someone else moved it meanwhile
     */
    public boolean moveBranch(DatasetId id, String branch, VersionHash version, String by, Head from) {
        return refs.moveBranch(id, branch, version, by, from);
    }

    /**
     * Checks, before a publish uploads anything, that {@code branch} may name its version: a valid
     * new ref name that no tag holds (tags and branches share one namespace). {@link #moveBranch}
     * checks again when it moves it.
     *
     * @throws RefExistsException if a tag has the name
     * @throws io.warpdata.manifest.ManifestValidationException if the name is not a valid branch name
     */
    public void requireBranchName(DatasetId id, String branch) {
        refs.requireBranchName(id, branch);
    }

    /**
     * Checks, before a view or publish uploads anything, that {@code tag} may name its version: a
     * valid new ref name that no branch holds, and no tag yet or one that names {@code version}
     * (if known yet). {@link #tag} checks again when it writes it.
     *
     * @throws RefExistsException if a branch has the name, or the tag names another version
     */
    public void requireTagFree(DatasetId id, String tag, Optional<VersionHash> version) {
        refs.requireTagFree(id, tag, version, false);
    }

    /**
     * A branch's head ({@code null}: latest) as the store holds it now, read past every cache:
     * what a publish that will move the branch bases itself on.
     */
    public Head head(DatasetId id, String branch) {
        return refs.head(branch == null ? StoreLayout.latest(id) : StoreLayout.branch(id, DatasetRef.requireRefName("branch", branch)));
    }

    /**
     * Names {@code version} with a tag. Tags never move: tagging another version with an
     * existing tag fails unless {@code force}; tagging the version it already names does nothing.
     *
     * @return whether the tag was written
     * @throws DatasetNotFoundException if the version's manifest is not in the store
     * @throws RefExistsException if the tag names another version (without force), or a branch has the name
     * @throws PointerMovedException if someone else wrote the tag meanwhile
     */
    public boolean tag(DatasetId id, String tag, VersionHash version, String by, boolean force) {
        return refs.tag(id, tag, version, by, force);
    }

    /**
     * Deletes a tag; returns the version it named.
     *
     * @throws DatasetNotFoundException if there is no such tag
     * @throws PointerMovedException if it changed meanwhile
     */
    public VersionHash deleteTag(DatasetId id, String tag) {
        return refs.deleteTag(id, tag);
    }

    /**
     * Deletes a branch (not latest: that is moved, never deleted), compare-and-swap on the
     * pointer as read now. The versions it named stay published.
     *
     * @return the version the branch named
     * @throws DatasetNotFoundException if there is no such branch
     * @throws RefExistsException if the name is a tag
     * @throws PointerMovedException if it moved meanwhile
     */
    public VersionHash deleteBranch(DatasetId id, String branch) {
        return refs.deleteBranch(id, branch);
    }

    /** A pointer as the store held it when read (no cache): its version and the object's version tag. */
    public record Head(Optional<VersionHash> version, String tag) {
    }

    /** Fails unless {@code version} of {@code id} is published: a pointer to it would break every reader. */
    void requirePublished(DatasetId id, VersionHash version) {
        if (!manifests.cached(id, version)
                && store.length(StoreLayout.version(id, version)).isEmpty()) {
            // A pointer to a missing manifest would break every reader of it.
            throw notFound.version(id, id + "@" + version.hex());
        }
    }

    /** Forgets latest pointers and listings (manifests are immutable and stay cached). */
    public void refresh() {
        cache.refresh();
    }

    /** "No tag or branch X", listing the dataset's tags and branches (or what else exists). */
    DatasetNotFoundException refNotFound(DatasetId id, String name) {
        return notFound.ref(id, name);
    }

    /** Answers served from the last known good state because the store did not answer. */
    /**
     * Of {@link #staleAnswers()}: those given because a re-check had not answered within its wait
     * (0.5 s): a hung store, or a slow one (a busy start of warpd re-checking many pointers at
     * once); the rest were given because the store failed.
     */
    public long slowAnswers() {
        return cache.slowAnswers();
    }

    public long staleAnswers() {
        return cache.staleAnswers();
    }

    /** Where answers are kept for outages and restarts. */
    public LastKnownGood known() {
        return known;
    }

    /** What kind of ref named a version. */
    public enum RefKind {
        /** The latest pointer: the default branch, moves with publishes. */
        LATEST,
        /** A hash or hash prefix: fixed for ever. */
        VERSION,
        /** A tag: an immutable name. */
        TAG,
        /** A branch: a movable name. */
        BRANCH;

        /** Whether the version this kind of ref names can change (latest, branches). */
        public boolean moves() {
            return this == LATEST || this == BRANCH;
        }
    }

    /** Which version a ref names (see {@link #locate}). */
    public record Located(DatasetId id, RefKind kind, VersionHash version) {
    }

    /** A resolved version. */
    public record Resolved(DatasetId id, VersionHash version, Manifest manifest, RefKind kind) {
        /** A version named by its hash. */
        public Resolved(DatasetId id, VersionHash version, Manifest manifest) {
            this(id, version, manifest, RefKind.VERSION);
        }
    }
}
