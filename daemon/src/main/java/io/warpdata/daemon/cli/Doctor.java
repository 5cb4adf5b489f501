package io.warpdata.daemon.cli;

import io.warpdata.daemon.control.protocol.CacheCalls;
import io.warpdata.daemon.control.protocol.Calls;
import io.warpdata.daemon.control.protocol.PassthroughStatus;
import io.warpdata.daemon.control.protocol.MirrorStatus;
import io.warpdata.daemon.control.protocol.StatusCall;
import io.warpdata.daemon.control.protocol.StoreStatus;
import io.warpdata.daemon.ByteSize;
import io.warpdata.store.BlobStore;
import io.warpdata.daemon.control.ControlClient;
import io.warpdata.daemon.inspect.DuckDb;
import io.warpdata.manifest.WarpException;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.BiFunction;
import java.util.function.Supplier;

/**
 * {@code warpctl doctor}'s checks. Each gives PASS, WARN or FAIL, what it saw, and for anything
 * not passing the command that fixes it. The machine is reached through {@link Host} so tests can
 * point the checks at fakes.
 */
public final class Doctor {
    /** "sudo " in a fix's command, or nothing for root (a root shell on a box without sudo has no such command). */
    private static final String SUDO = io.warpdata.daemon.control.ProcessIdentity.uid() == 0 ? "" : "sudo ";
    public enum Status { PASS, WARN, FAIL }

    /** One check's outcome; {@code fix} is empty for PASS. */
    public record Check(String name, Status status, String detail, String fix) {
    }

    /** What the checks look at. */
    public record Settings(Optional<String> remote, Optional<String> endpoint, Path cacheDir, long cacheSizeBytes,
                           Path socket, boolean allowOther) {
    }

    /** The machine: files, PATH, the dynamic linker's cache, the environment, and how to open a store. */
    public record Host(Map<String, String> env, Path devFuse, Path fuseConf, Path home,
                       Supplier<String> ldconfig, BiFunction<String, Optional<String>, BlobStore> stores) {
    }

    private final Settings settings;
    private final Host host;

    public Doctor(Settings settings, Host host) {
        this.settings = settings;
        this.host = host;
    }

    /**
     * Runs every check. When a warpd answers on the socket, the remote and the cache directory
     * checked are that warpd's (its store as it sees it, its cache directory and free space, from
     * the daemon itself): a client with no remote configured, or a default cache directory that
     * is not warpd's, is then not a failure. A remote given to this command is checked as well.
     */
    public List<Check> run() {
        List<Check> checks = new ArrayList<>();
        Optional<Daemon> daemon = daemon();
        // What a warpd needs to mount: a failure is this user's only to start one of their own
        // when a warpd has mounted already (audit 37: a user reading a root warpd's mount got a
        // FAIL on /dev/fuse, exit 1, though they mount nothing).
        for (Check c : List.of(devFuse(), fusermount(), libfuse())) {
            checks.add(daemon.isPresent() ? mountedAlready(c, daemon.get()) : c);
        }
        checks.add(allowOther());
        daemon.map(d -> mountAccess(Path.of(d.status().mount()))).ifPresent(checks::add);
        if (daemon.isEmpty() || settings.remote().isPresent()) {
            Check remote = remote();
            settings.remote().filter(r -> r.startsWith("s3://"))
                    .ifPresent(r -> checks.add(credentials(remote.status() == Status.PASS)));
            checks.add(remote);
            if (remote.status() == Status.PASS) {
                conditionalWrites().ifPresent(checks::add);
            }
        }
        daemon.ifPresent(d -> checks.add(daemonRemote(d)));
        checks.add(daemon.map(this::daemonCacheDir).orElseGet(this::cacheDir));
        checks.add(daemon.map(Daemon::socketCheck).orElseGet(this::socket));
        checks.addAll(deadMounts(io.warpdata.daemon.warpd.MountPoint.deadWarpMounts()));
        daemon.flatMap(Doctor::passthrough).ifPresent(checks::add);
        daemon.ifPresent(d -> checks.addAll(mirrors(d.status().mirrors())));
        checks.add(duckdb());
        return checks;
    }

    /** A mount prerequisite's failure, when a warpd has mounted already: a warning for starting another. */
    static Check mountedAlready(Check c, Daemon d) {
        if (c.status() != Status.FAIL) {
            return c;
        }
        return new Check(c.name(), Status.WARN, c.detail() + " (only to start a warpd as this user: " + d.serves()
                + " has mounted already)", c.fix());
    }

    /**
     * Whether this user may read a running warpd's mount. Audit 37: without --allow-other the
     * kernel lets only warpd's own user in, and everyone else got a bare "Permission denied"
     * that neither status nor doctor explained.
     */
    static Check mountAccess(Path mount) {
        return mountAccess(mount, m -> {
            try {
                // The kernel refuses even a stat of the mount's root to other users without
                // allow_other (EACCES): Files.exists said false, and the check called the mount
                // "not there" (audit 39).
                Files.readAttributes(m, java.nio.file.attribute.BasicFileAttributes.class);
            } catch (java.nio.file.AccessDeniedException denied) {
                return false;
            } catch (IOException other) {
                return true; // not there: said below
            }
            return Files.isReadable(m) && Files.isExecutable(m);
        });
    }

    /** As {@link #mountAccess(Path)}, with how this user's access is told ({@code access(2)}: tests). */
    static Check mountAccess(Path mount, java.util.function.Predicate<Path> mayEnter) {
        String name = "mount access";
        if (!mayEnter.test(mount)) {
            return new Check(name, Status.FAIL, mount + " does not let this user in (permission denied): warpd was started"
                    + " without --allow-other, so the kernel lets only warpd's own user read its mount",
                    "restart warpd with --allow-other (allow-other = true in /etc/warp/warpd.conf; a warpd that is not root"
                            + " needs user_allow_other in /etc/fuse.conf too), or read as warpd's user");
        }
        if (!Files.isDirectory(mount)) {
            return new Check(name, Status.WARN, mount + " is not there from here (another mount namespace?)",
                    "run doctor where the training jobs run");
        }
        return pass(name, mount + " may be read by this user");
    }

    /** What a running warpd said about itself: {@code status} and {@code cache.stats}. */
    record Daemon(StatusCall.Reply status, CacheCalls.Stats cache, Check socketCheck) {
        String serves() {
            return "warpd " + status.version() + " serving " + status.mount() + " from " + status.remote();
        }
    }

    /** Whether warpd says its store is down (and not deliberately offline). */
    private static boolean storeDown(StoreStatus store) {
        return store != null && !store.reachable() && !store.offline();
    }

    private Optional<Daemon> daemon() {
        Check socket = socket();
        if (socket.status() == Status.FAIL) {
            return Optional.empty();
        }
        try (ControlClient c = ControlClient.connect(settings.socket()).answering(DaemonCalls.QUICK_ANSWER)) {
            return Optional.of(new Daemon(c.call(Calls.STATUS), c.call(Calls.CACHE_STATS), socket));
        } catch (WarpException e) {
            return Optional.empty();
        }
    }

    /** warpd's store, as warpd reaches it (its own credentials and endpoint). */
    Check daemonRemote(Daemon d) {
        String name = "warpd's remote";
        String remote = d.status().remote();
        StoreStatus store = d.status().store();
        String at = "warpd at " + settings.socket() + " serves " + remote;
        if (storeDown(store)) {
            return new Check(name, Status.FAIL, at + "; store " + StatusCommand.storeLine(store),
                    "check the network and the store as warpd sees them (its --endpoint, its credentials); warpd retries every 5 s");
        }
        String mismatch = settings.remote().filter(r -> !strip(r).equals(strip(remote)))
                .map(r -> "; this command's remote " + r + " is another store (publish then runs in this process, not through warpd)")
                .orElse("");
        return new Check(name, mismatch.isEmpty() ? Status.PASS : Status.WARN,
                at + (store != null ? (store.offline() ? "; offline (local mode)" : "; store reachable") : "")
                        + mismatch,
                mismatch.isEmpty() ? "" : "pass --remote " + remote + " (or unset WARP_REMOTE) to use warpd's store");
    }

    /**
     * warpd's FUSE passthrough, when it was asked for: a warning when it does not run (the
     * reason names the fix). Nothing when it is off, or from a warpd that does not report it.
     */
    static Optional<Check> passthrough(Daemon d) {
        PassthroughStatus p = d.status().passthrough();
        if (p == null || "off".equals(p.state())) {
            return Optional.empty();
        }
        String line = StatusCommand.passthroughLine(p);
        if (p.failing()) {
            int colon = p.reason().indexOf(": ");
            String fix = colon < 0 ? "drop --passthrough" : p.reason().substring(colon + 2);
            return Optional.of(new Check("passthrough", Status.WARN, "asked for, but " + p.state()
                    + (colon < 0 ? ": " + p.reason() : ": " + p.reason().substring(0, colon)), fix));
        }
        return Optional.of(pass("passthrough", line));
    }

    /**
     * warpd's mirrors: a warning for one that is down, or that served bytes which failed
     * verification (a poisoned cache: every read it answers goes to the store again). Nothing
     * without mirrors. Doctor used to say "All checks passed" with a mirror down.
     */
    static List<Check> mirrors(List<MirrorStatus> mirrors) {
        List<Check> out = new ArrayList<>();
        for (MirrorStatus m : mirrors) {
            String name = "mirror " + m.mirror();
            String counts = m.hits() + " hits, " + m.misses() + " misses, " + m.errors() + " errors ("
                    + m.timeouts() + " timeouts), " + m.verificationFailures() + " verification failures";
            if (m.verificationFailures() > 0) {
                out.add(new Check(name, Status.WARN, m.state() + "; " + counts,
                        "it served bytes that are not the publisher's (reads went to the store instead): purge or fix"
                                + " that cache (docs/fleet.md), or drop it from --mirror"));
            } else if ("down".equals(m.state())) {
                out.add(new Check(name, Status.WARN, "down (skipped while it fails); " + counts,
                        "check that the mirror runs and answers: curl -r 0-0 of <its URL>/blobs/sha256/<xx>/<hash> of"
                                + " an object the store has must give 206 (its root answers 404 by design); reads go to"
                                + " the store meanwhile"));
            } else if (m.hits() == 0 && m.misses() >= io.warpdata.blobcache.cache.RemoteTierStats.NEVER_HELD) {
                out.add(new Check(name, Status.WARN, m.state() + " but it has held nothing it was asked for; " + counts,
                        "a mirror that answers 404 to everything has a wrong BASE, or forwards to the wrong bucket path:"
                                + " compare its URL with the store's keys (docs/fleet.md)"));
            } else if (m.hits() + m.misses() == 0) {
                out.add(pass(name, m.state() + ", not asked yet: no read has needed it since warpd started (doctor"
                        + " does not probe mirrors; the first reads do)"));
            } else {
                out.add(pass(name, m.state() + "; " + counts));
            }
        }
        return out;
    }

    private static String strip(String uri) {
        String u = uri.trim();
        while (u.endsWith("/")) {
            u = u.substring(0, u.length() - 1);
        }
        return u;
    }

    /** warpd's cache directory, its use and the free space on its disk, as warpd reports them. */
    Check daemonCacheDir(Daemon d) {
        return cacheCheck(d.cache());
    }

    /**
     * The check of a running warpd's cache from its {@code cache.stats} (the disk looked at from
     * here: the folder, its inodes, a write): doctor's "warpd's cache" line and {@code warpctl
     * status}'s "cache:" line (audit 35: status said nothing of a full cache disk).
     */
    /** What the cache line says when warpd keeps nothing it fetches: what {@code status --check} fails on. */
    static final String CACHES_NOTHING = "caches nothing";

    static Check cacheCheck(CacheCalls.Stats c) {
        return cacheCheck(c, true);
    }

    /**
     * As {@link #cacheCheck(CacheCalls.Stats)}; {@code probeWrites} false leaves out the write
     * probe (a temp file made and deleted in warpd's {@code v1/tmp}), which only doctor makes:
     * {@code status}, run every few seconds by health checks ({@code --check}), writes nothing
     * into warpd's cache (session 30's review), and does not tell a read-only remount.
     */
    static Check cacheCheck(CacheCalls.Stats c, boolean probeWrites) {
        String name = "warpd's cache";
        String dir = c.dir() == null ? "" : c.dir();
        if (dir.isBlank() || "remote".equals(c.mode())) {
            return pass(name, "warpd keeps its cache in memory (mode " + (c.mode() == null ? "?" : c.mode()) + ", "
                    + ByteSize.format(c.limitBytes()) + ")");
        }
        long used = c.sizeBytes();
        long limit = c.limitBytes();
        String detail = dir + ": " + ByteSize.format(used) + " used of its " + ByteSize.format(limit) + " limit";
        if (c.freeBytes() == null) {
            return pass(name, detail + " (warpd did not report the free space)");
        }
        long free = c.freeBytes();
        long floor = c.freeFloorBytes();
        detail += ", " + ByteSize.format(free) + " free on its disk";
        Path v1 = Path.of(dir).resolve("v1");
        Path tmpDir = v1.resolve("tmp");
        if (Files.notExists(v1)) {
            // Deleted under a running warpd (audit 31: doctor said PASS with 19 blocks reported). Not
            // merely out of reach: a user who may not enter warpd's 0700 cache directory cannot tell.
            return new Check(name, Status.WARN, detail + ", but " + v1 + " is gone (deleted while warpd runs): the "
                    + ByteSize.format(used) + " it reports are no longer there",
                    "nothing to do if that was meant: warpd makes it again at its next write that finds it still"
                            + " gone (after 5 s) and forgets those blocks; a whole cache directory deleted is not made"
                            + " again: restart warpd");
        }
        // Out of inodes before refused writes: a disk without inodes refuses writes too, and its fix is
        // another (audit 31); but after the free-space floor, under which nothing is kept whatever the
        // inodes (audit 33: the inode warning alone advised freeing inodes on a disk under its floor).
        Optional<Check> inodes = free < floor ? Optional.empty() : fewInodes(name, Path.of(dir), detail);
        if (inodes.isPresent()) {
            return inodes.get();
        }
        IOException refused = probeWrites && Files.isDirectory(tmpDir) ? tryWrite(tmpDir) : null;
        // Only a refusal that is warpd's too: doctor may run as another user than warpd (a member of
        // its group may read, not write), so a denied probe says nothing about warpd (review).
        long skipped = c.counters().getOrDefault("cache_writes_skipped", 0L);
        if (refused != null && (readOnly(refused) || skipped > 0)) {
            // A disk remounted read-only, or permissions changed, under a running warpd (audit 23:
            // doctor said PASS while warpd skipped every write).
            return new Check(name, Status.WARN, detail + ", but " + v1 + " refuses writes (" + refused.getMessage()
                    + "): warpd " + CACHES_NOTHING + " there" + (skipped > 0 ? " (" + skipped + " blocks served uncached)" : "")
                    + " and fetches reads from the store again", "make the cache's disk writable again (a read-only"
                    + " remount?), or restart warpd with a --cache-dir on a writable local disk");
        }
        if (free < floor) {
            // What warpd does at its next write, not a state it is in while idle (audit 31): it
            // evicts its own blocks to get back above the floor, and caches nothing new only when
            // they cannot make up the difference.
            long shortBy = floor - free;
            String next = used > shortBy
                    ? ": at its next write warpd evicts " + ByteSize.format(shortBy) + " of its blocks to get back"
                    + " above it, so its cache holds at most " + ByteSize.format(used - shortBy) + " until space returns"
                    : ": its own " + ByteSize.format(used) + " of blocks cannot make up the " + ByteSize.format(shortBy)
                    + " missing, so warpd " + CACHES_NOTHING + " new and fetches reads from the store again";
            return new Check(name, Status.WARN, detail + ", under the free-space floor of " + ByteSize.format(floor)
                    + next, "free space on that disk, or give warpd a --cache-dir on a larger"
                    + " one: the floor is max(5% of its file system, 1 GiB) whatever --cache-size is");
        }
        if (used + free - floor < limit) {
            return new Check(name, Status.WARN, detail + ": the disk reaches the free-space floor of "
                    + ByteSize.format(floor) + " before the cache limit",
                    "free space on that disk, or lower the limit: warpd --cache-size "
                            + ByteSize.format((used + free - floor) * 8 / 10).replace(" ", ""));
        }
        return pass(name, detail);
    }

    /**
     * One failure per Warp mount whose warpd died (kill -9, out of memory): every read there says
     * "Transport endpoint is not connected" until it is cleared. None when there is none.
     */
    static List<Check> deadMounts(List<Path> dead) {
        List<Check> out = new ArrayList<>();
        for (Path m : dead) {
            out.add(new Check("dead mount", Status.FAIL, m + " is a Warp mount whose warpd is gone: every read there"
                    + " fails with 'Transport endpoint is not connected'", "start warpd again on it (it clears the"
                    + " mount first: systemctl restart warpd), or unmount it: fusermount -u -z " + m));
        }
        return out;
    }

    private static Check pass(String name, String detail) {
        return new Check(name, Status.PASS, detail, "");
    }

    Check devFuse() {
        String name = "/dev/fuse";
        if (!Files.exists(host.devFuse())) {
            return new Check(name, Status.FAIL, host.devFuse() + " is missing",
                    SUDO + "modprobe fuse (in a container: run it with --device /dev/fuse --cap-add SYS_ADMIN)");
        }
        try (RandomAccessFile f = new RandomAccessFile(host.devFuse().toFile(), "rw")) {
            return pass(name, host.devFuse() + " present and openable");
        } catch (IOException e) {
            return new Check(name, Status.FAIL, "cannot open " + host.devFuse() + ": " + e.getMessage(),
                    SUDO + "chmod 0666 " + host.devFuse() + " (or run warpd as root / in the fuse group)");
        }
    }

    Check fusermount() {
        for (String dir : host.env().getOrDefault("PATH", "/usr/bin:/bin").split(":")) {
            for (String exe : List.of("fusermount3", "fusermount")) {
                Path p = Path.of(dir.isEmpty() ? "." : dir, exe);
                if (Files.isExecutable(p)) {
                    return pass("fusermount", p.toString());
                }
            }
        }
        return new Check("fusermount", Status.FAIL, "neither fusermount3 nor fusermount is on PATH",
                SUDO + "apt-get install fuse3");
    }

    Check libfuse() {
        String out;
        try {
            out = host.ldconfig().get();
        } catch (RuntimeException e) {
            out = "";
        }
        for (String line : out.split("\n")) {
            if (line.trim().startsWith("libfuse.so.2 ")) {
                return pass("libfuse2", line.trim());
            }
        }
        return new Check("libfuse2", Status.FAIL, "libfuse.so.2 is not in the dynamic linker's cache (ldconfig -p)",
                SUDO + "apt-get install libfuse2 (Debian 12: libfuse2; Ubuntu 24.04: libfuse2t64)");
    }

    Check allowOther() {
        boolean enabled = false;
        try {
            for (String line : Files.readAllLines(host.fuseConf(), StandardCharsets.UTF_8)) {
                if (line.trim().equals("user_allow_other")) {
                    enabled = true;
                }
            }
        } catch (IOException e) {
            enabled = false;
        }
        if (enabled) {
            return pass("user_allow_other", "enabled in " + host.fuseConf());
        }
        return new Check("user_allow_other", settings.allowOther() ? Status.FAIL : Status.WARN,
                "not enabled in " + host.fuseConf() + (settings.allowOther()
                        ? "; warpd is configured with --allow-other and cannot mount as a non-root user"
                        : "; other users cannot read a mount made by a non-root warpd (fine if only its user reads it)"),
                "echo user_allow_other | " + SUDO + "tee -a " + host.fuseConf());
    }

    Check credentials(boolean remoteWorked) {
        Map<String, String> env = host.env();
        String source = null;
        if (present(env, "AWS_ACCESS_KEY_ID") && present(env, "AWS_SECRET_ACCESS_KEY")) {
            source = "AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY";
        } else if (present(env, "AWS_WEB_IDENTITY_TOKEN_FILE")) {
            source = "web identity token " + env.get("AWS_WEB_IDENTITY_TOKEN_FILE");
        } else if (present(env, "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI") || present(env, "AWS_CONTAINER_CREDENTIALS_FULL_URI")) {
            source = "container credentials";
        } else {
            String profile = env.getOrDefault("AWS_PROFILE", "default");
            Path creds = Path.of(env.getOrDefault("AWS_SHARED_CREDENTIALS_FILE", host.home().resolve(".aws/credentials").toString()));
            Path config = Path.of(env.getOrDefault("AWS_CONFIG_FILE", host.home().resolve(".aws/config").toString()));
            if (mentions(creds, "[" + profile + "]") || mentions(config, "[profile " + profile + "]")
                    || mentions(config, "[" + profile + "]")) {
                source = "profile '" + profile + "'";
            }
        }
        if (source != null) {
            return pass("AWS credentials", source);
        }
        if (remoteWorked) {
            return pass("AWS credentials", "none in env or profile files, but the SDK's default chain worked (e.g. an instance role)");
        }
        return new Check("AWS credentials", Status.FAIL, "no AWS credentials in the environment or ~/.aws",
                "export AWS_ACCESS_KEY_ID=... AWS_SECRET_ACCESS_KEY=... (or aws configure, or set AWS_PROFILE)");
    }

    private static boolean present(Map<String, String> env, String key) {
        return env.get(key) != null && !env.get(key).isBlank();
    }

    private static boolean mentions(Path file, String text) {
        try {
            return Files.isReadable(file) && Files.readString(file).contains(text);
        } catch (IOException e) {
            return false;
        }
    }

    Check remote() {
        if (settings.remote().isEmpty()) {
            return new Check("remote", Status.FAIL, "no remote configured",
                    "pass --remote s3://bucket/prefix (or file:///dir), or export WARP_REMOTE=...");
        }
        String uri = settings.remote().get();
        try (BlobStore store = host.stores().apply(uri, settings.endpoint())) {
            io.warpdata.store.BlobStores.requireExisting(store);
            List<String> workspaces = store.list("datasets/");
            String read = rangedRead(store);
            return pass("remote", store.describe() + ": listed " + workspaces.size() + " workspace(s); " + read);
        } catch (WarpException e) {
            // The store's advice names doctor itself: not from inside doctor.
            return new Check("remote", Status.FAIL, uri + ": " + e.getMessage(), e.nextStep().replace(" (warpctl doctor)", ""));
        } catch (RuntimeException e) {
            return new Check("remote", Status.FAIL, uri + ": " + e, "check the URI, --endpoint and the network");
        }
    }

    /** Where the conditional-write probe is written (and deleted at once): nothing reads it. */
    static final String CONDITIONAL_PROBE = "warp-probe/conditional-write-";

    /**
     * Whether an S3 store refuses a conditional write that lost ({@link BlobStore#enforcesConditionalWrites}):
     * without it two publishers, tag or branch moves racing on one pointer can both be told they
     * won. Empty for a store that locks instead (a directory). Writes one small object and deletes it.
     */
    Optional<Check> conditionalWrites() {
        String name = "conditional writes";
        try (BlobStore store = host.stores().apply(settings.remote().orElseThrow(), settings.endpoint())) {
            Optional<Boolean> enforced = store.enforcesConditionalWrites(CONDITIONAL_PROBE + java.util.UUID.randomUUID());
            return enforced.map(yes -> yes
                    ? pass(name, "the store refused a PUT with If-None-Match: * of an object that exists (412): of two"
                            + " writers racing on latest, a branch or a tag exactly one wins")
                    : new Check(name, Status.WARN, "the store accepted a PUT with If-None-Match: * of an object that"
                            + " exists (S3Proxy 2.x does): two publishes, tags or branch moves racing on one pointer"
                            + " can both be told they won, and one of them is lost",
                            "publish, tag and move branches from one writer at a time on this store, or use a server"
                                    + " that enforces conditional writes (AWS S3 and S3Proxy 4 do)"));
        } catch (io.warpdata.store.PermissionDeniedException e) {
            return Optional.of(new Check(name, Status.WARN, "not checked: these credentials cannot write to the store ("
                    + e.getMessage() + "); readers need not",
                    "run warpctl doctor with the credentials that publish to check it"));
        } catch (WarpException e) {
            return Optional.of(new Check(name, Status.WARN, "not checked: " + e.getMessage(), e.nextStep()));
        }
    }

    /** Reads the first bytes of one blob (a ranged GET), or says the store has none yet. */
    private static String rangedRead(BlobStore store) {
        for (String prefix : store.list("blobs/sha256/")) {
            if (!prefix.endsWith("/")) {
                continue;
            }
            for (String name : store.list("blobs/sha256/" + prefix)) {
                if (name.endsWith("/")) {
                    continue;
                }
                String key = "blobs/sha256/" + prefix + name;
                OptionalLong len = store.length(key);
                int n = (int) Math.min(64, len.orElse(0));
                store.read(key, 0, new byte[Math.max(1, n)], 0, n);
                return "ranged read of " + n + " bytes of " + key + " ok";
            }
        }
        return "no blobs published yet, ranged read skipped";
    }

    /** Free inodes under which the cache disk is reported: a file per block, a few thousand blocks. */
    static final long LOW_INODES = 10_000;

    /**
     * A warning when the disk holding {@code dir} has fewer than max({@link #LOW_INODES}, 1%)
     * inodes free: warpd keeps a file per cached block, so with none left it keeps only the
     * blocks whose files it can make by evicting others, though bytes are free.
     */
    private static Optional<Check> fewInodes(String name, Path dir, String detail) {
        Optional<Inodes.Count> inodes = Inodes.of(dir);
        if (inodes.isEmpty() || inodes.get().free() >= Math.max(LOW_INODES, inodes.get().total() / 100)) {
            return Optional.empty();
        }
        return Optional.of(new Check(name, Status.WARN, detail + ", but only " + inodes.get().free() + " of "
                + inodes.get().total() + " inodes free: warpd keeps a file per cached block, so it keeps few blocks"
                + " there (out of inodes it evicts its own to write new ones) and fetches reads from the store again", "delete files on that disk (many small"
                + " ones), or put the cache on another disk (--cache-dir)"));
    }

    Check cacheDir() {
        Path dir = settings.cacheDir();
        Path existing = dir;
        while (existing != null && !Files.exists(existing)) {
            existing = existing.getParent();
        }
        // One probe: a temp file made and deleted where the cache will be (or its nearest parent).
        IOException refused = existing != null && Files.isDirectory(existing) ? tryWrite(existing) : null;
        if (readOnly(refused)) {
            // The JDK's FileStore misses a read-only bind mount of a writable disk: asked by writing.
            return new Check("cache dir", Status.FAIL, dir + " is on a read-only file system: warpd refuses to start"
                    + " there", "pass a --cache-dir (or set WARP_CACHE_DIR) on a writable local disk");
        }
        if (existing == null || !Files.isDirectory(existing) || refused != null) {
            return new Check("cache dir", Status.FAIL, dir + " is not writable (nearest existing: " + existing + ")",
                    SUDO + "mkdir -p " + dir + " && " + SUDO + "chown $USER " + dir + " (or pass --cache-dir / set WARP_CACHE_DIR)");
        }
        try {
            java.nio.file.FileStore fs = Files.getFileStore(existing);
            long free = fs.getUsableSpace();
            long floor = io.warpdata.blobcache.cache.CacheConfig.floorBytes(
                    io.warpdata.blobcache.cache.CacheConfig.AUTO_FREE_FLOOR, fs.getTotalSpace());
            String detail = dir + (existing.equals(dir) ? " writable" : " will be created under " + existing)
                    + ", " + ByteSize.format(free) + " free, cache limit " + ByteSize.format(settings.cacheSizeBytes());
            if (free <= floor) {
                // Lowering the limit cannot help: nothing is written under the floor.
                return new Check("cache dir", Status.WARN, detail + ": under warpd's free-space floor of "
                        + ByteSize.format(floor) + " (5% of the disk, at least 1 GiB), so warpd would keep nothing"
                        + " there and fetch every read from the store", "free space on that disk, or put the cache on"
                        + " a disk with more than " + ByteSize.format(floor) + " free (--cache-dir)");
            }
            Optional<Check> inodes = fewInodes("cache dir", existing, detail);
            if (inodes.isPresent()) {
                return inodes.get();
            }
            if (free - floor < settings.cacheSizeBytes()) {
                return new Check("cache dir", Status.WARN, detail + ": the disk reaches warpd's free-space floor of "
                        + ByteSize.format(floor) + " before the cache limit",
                        "free space on that disk, or lower the limit: warpd --cache-size "
                                + ByteSize.format((free - floor) * 8 / 10).replace(" ", ""));
            }
            return pass("cache dir", detail);
        } catch (IOException e) {
            return new Check("cache dir", Status.FAIL, "cannot write in " + dir + ": " + e.getMessage(),
                    SUDO + "chown $USER " + dir + " (or pass --cache-dir / set WARP_CACHE_DIR)");
        }
    }

    /** Why a temp file cannot be made (and deleted) in {@code dir}, or null if it can. */
    /** Whether a write probe was refused by a read-only file system (EROFS), not by permissions. */
    private static boolean readOnly(IOException refused) {
        return refused instanceof java.nio.file.FileSystemException f && String.valueOf(f.getReason()).contains("Read-only");
    }

    private static IOException tryWrite(Path dir) {
        try {
            Files.delete(Files.createTempFile(dir, ".warp-doctor", ".tmp"));
            return null;
        } catch (IOException e) {
            return e;
        }
    }

    Check socket() {
        try (ControlClient c = ControlClient.connect(settings.socket()).answering(DaemonCalls.QUICK_ANSWER)) {
            StatusCall.Reply s = c.call(Calls.STATUS);
            String serving = settings.socket() + ": warpd " + s.version() + " serving " + s.mount() + " from " + s.remote();
            if (storeDown(s.store())) {
                return new Check("control socket", Status.WARN, serving + "; store " + StatusCommand.storeLine(s.store()),
                        "check the network and the store (--endpoint, credentials); cached data keeps serving, reads"
                                + " of uncached data fail with EIO until the store is back (warpd retries every 5 s)");
            }
            return pass("control socket", serving);
        } catch (WarpException e) {
            return new Check("control socket", Status.FAIL, e.getMessage(), e.nextStep());
        }
    }

    Check duckdb() {
        try {
            Class.forName("org.duckdb.DuckDBDriver");
            try (Connection c = DuckDb.connect();
                 Statement st = c.createStatement();
                 ResultSet rs = st.executeQuery("SELECT version()")) {
                rs.next();
                return pass("DuckDB", "loaded, " + rs.getString(1));
            }
        } catch (Exception | LinkageError e) {
            return new Check("DuckDB", Status.FAIL, "cannot load DuckDB: " + e,
                    "DuckDB extracts a native library to java.io.tmpdir: make /tmp writable and not noexec, or pass -Djava.io.tmpdir=DIR");
        }
    }
}
