package io.warpdata.catalog;

import io.warpdata.blobcache.cache.WriteGate;
import io.warpdata.store.BlobStore;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.warpdata.manifest.BlobId;
import io.warpdata.manifest.ManifestCodec;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The catalog's last known good answers, kept so that the mount keeps answering while the store
 * does not (stale-if-error) and after a restart without it: listings and pointers with the time
 * each was last confirmed by the store (and a pointer's version tag, for conditional re-reads),
 * manifests as stored, and small metadata blobs (member indexes) by their id.
 *
 * <p>On disk, under {@code <cache dir>/catalog/} (format version 1):
 * <pre>
 * v1/known/&lt;sha256 of the store key&gt;.json   one listing or pointer, naming its key
 * v1/manifests/&lt;ws&gt;/&lt;name&gt;/&lt;hash&gt;.json    manifests of format 1 as the store holds them
 * v1/manifests.format-N/&lt;ws&gt;/&lt;name&gt;/&lt;hash&gt;.json   those of format N &gt; 1
 * v1/blobs/&lt;blob id&gt;                          member indexes, named by their own SHA-256
 * v1/tmp/                                     files being written; emptied at start
 * </pre>
 * Every file is written to {@code tmp/} and renamed into place, so a crash leaves the old file
 * or the new one, never half of one. Whatever cannot be read back, or does not verify (a blob
 * read whole against its id; the catalog checks a manifest against its version), is deleted and
 * treated as unknown: a damaged entry is a miss, never an error that stops the mount. A blob file
 * handed out to be read in place ({@link #keptBlobFile}) is verified by its reader, which
 * forgets it ({@link #forgetBlobFile}) when it does not match.
 *
 * <p>Memory: what is read or written is also kept in maps (listings and pointers are small and
 * few; manifests and blobs are read from disk when needed and cached by their users).
 * {@link #inMemory()} keeps only the maps, for warpd without a disk ({@code --mode remote}) and
 * one-shot commands. Thread-safe.
 */
public final class LastKnownGood {
    private static final Logger LOG = LoggerFactory.getLogger(LastKnownGood.class);
    private static final JsonFactory JSON = new JsonFactory();
    /** The layout's version: a future change of format goes to v2/ and leaves v1/ alone. */
    static final String FORMAT = "v1";
    /** The formats whose folders this release reads: 1 (manifests/, every format before the per-format folders), then 2 up. */
    private static final int[] MANIFEST_FORMATS = java.util.stream.IntStream.rangeClosed(1, ManifestCodec.FORMAT_VERSION)
            .toArray();
    /**
     * A confirmation that changes nothing is written to disk at most this often: the time a
     * pointer was last confirmed is shown after a restart to within 5 minutes, while a pointer
     * re-checked every 30 s does not cost a disk write each time.
     */
    static final Duration CONFIRMATION_WRITE_EVERY = Duration.ofMinutes(5);

    /** A listing: the children of a prefix, as {@link BlobStore#list} gave them. */
    public record Listing(List<String> children, Instant confirmed) {
        public Listing {
            children = List.copyOf(children);
        }
    }

    /**
     * A pointer: the version it named ({@code null} if there was no such object) and the
     * object's version tag ({@code null} if absent).
     */
    public record Pointer(String version, String tag, Instant confirmed) {
    }

    private final Path dir;
    private final Map<String, Listing> listings = new ConcurrentHashMap<>();
    private final Map<String, Pointer> pointers = new ConcurrentHashMap<>();
    /** When an entry was last written to disk, to throttle confirmations. */
    private final Map<String, Instant> written = new ConcurrentHashMap<>();
    private final AtomicLong tmpCounter = new AtomicLong();
    /** Files being written (a load that answers after {@link #close} keeps nothing). */
    private final WriteGate writes = new WriteGate();
    /** Kept blob files this process has asked for (each marked used once, for {@link #trimBlobs}). */
    private final java.util.Set<BlobId> usedFiles = ConcurrentHashMap.newKeySet();

    /** Whether a member index of so many bytes may be kept: the disk stays above its free-space floor. */
    private final java.util.function.LongPredicate roomFor;
    /** Member indexes not kept for want of room, and when that was last logged (nanoTime, 0: never). */
    private final java.util.concurrent.atomic.LongAdder notKept = new java.util.concurrent.atomic.LongAdder();
    private final AtomicLong floorLogged = new AtomicLong();

    private LastKnownGood(Path dir, java.util.function.LongPredicate roomFor) {
        this.dir = dir;
        this.roomFor = roomFor;
    }

    /**
     * Whether {@code bytes} of member index may be written now; when not, says so in the log at
     * most once a minute (a reader of a million-member artifact would ask for every part).
     */
    private boolean room(long bytes) {
        if (roomFor.test(bytes)) {
            return true;
        }
        notKept.increment();
        long now = System.nanoTime();
        long last = floorLogged.get();
        if ((last == 0 || now - last > 60_000_000_000L) && floorLogged.compareAndSet(last, now == 0 ? 1 : now)) {
            LOG.warn("the disk of {} is under warpd's free-space floor: member indexes are not kept there ({} so far);"
                    + " they are read from the store into memory when needed and are not known offline. Free space on"
                    + " that disk (warpctl doctor shows the floor)", dir, notKept.sum());
        }
        return false;
    }

    /**
     * Writes nothing more from now on, and waits a few seconds for the files being written (a
     * load still under way when warpd stops): once this returns, a user may delete the cache
     * directory. Answers are still served from memory.
     */
    public void close() {
        if (dir != null && !writes.close()) {
            LOG.warn("files were still being written into {} when warpd stopped; they may land after it", dir);
        }
    }

    /** Member indexes not kept on disk because it was under its free-space floor. */
    public long blobsNotKeptForRoom() {
        return notKept.sum();
    }

    /**
     * State kept under {@code catalogDir} (created if needed; leftover temp files removed).
     *
     * @throws UncheckedIOException if the directory cannot be created
     */
    public static LastKnownGood onDisk(Path catalogDir) {
        return onDisk(catalogDir, bytes -> true);
    }

    /**
     * As {@link #onDisk(Path)}, keeping member indexes only while {@code roomFor} says their
     * bytes fit above the disk's free-space floor (pointers, listings and manifests, a few KB,
     * are always kept: they are what offline serving needs first).
     */
    public static LastKnownGood onDisk(Path catalogDir, java.util.function.LongPredicate roomFor) {
        Path root = catalogDir.resolve(FORMAT);
        try {
            Files.createDirectories(root.resolve("known"));
            Files.createDirectories(root.resolve("manifests"));
            Files.createDirectories(root.resolve("blobs"));
            Files.createDirectories(root.resolve("tmp"));
            try (DirectoryStream<Path> tmp = Files.newDirectoryStream(root.resolve("tmp"))) {
                for (Path p : tmp) {
                    Files.deleteIfExists(p);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot prepare the catalog state directory " + root, e);
        }
        LastKnownGood known = new LastKnownGood(root, roomFor);
        known.moveManifestsToTheirFormats();
        return known;
    }

    /**
     * Moves each manifest of format 2 or more kept in {@code manifests/} (by a release before the
     * per-format folders) to its format's folder, at start: one not read since an upgrade would
     * otherwise still be taken for damage by a downgraded warpd (the review). A file whose format
     * cannot be read stays, for the reader to verify.
     */
    private void moveManifestsToTheirFormats() {
        Path legacy = dir.resolve("manifests");
        List<Path> files;
        try (var walk = Files.walk(legacy)) {
            files = walk.filter(p -> p.getFileName().toString().endsWith(".json") && Files.isRegularFile(p)).toList();
        } catch (IOException e) {
            LOG.warn("cannot list the kept manifests in {} ({}); each moves to its format's folder when read", legacy,
                    e.toString());
            return;
        }
        int moved = 0;
        for (Path f : files) {
            int format = formatOf(f);
            if (format < 2 || format > ManifestCodec.FORMAT_VERSION) {
                continue;
            }
            Path target = dir.resolve("manifests.format-" + format).resolve(legacy.relativize(f));
            try {
                synchronized (lockOf(target)) {
                    if (folders(target.getParent())) {
                        Files.move(f, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
                        moved++;
                    }
                }
            } catch (IOException e) {
                LOG.warn("cannot move the kept manifest {} to {} ({}); it moves when read", f, target, e.toString());
            }
        }
        if (moved > 0) {
            LOG.info("moved {} kept manifest(s) of format 2 or more to their formats' folders in {}", moved, dir);
        }
    }

    /** The top-level {@code format_version} of a kept manifest, or 0 when it has none or cannot be read. */
    private static int formatOf(Path file) {
        try (JsonParser p = JSON.createParser(file.toFile())) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                return 0;
            }
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                JsonToken value = p.nextToken();
                if ("format_version".equals(name)) {
                    return value == JsonToken.VALUE_NUMBER_INT ? p.getIntValue() : 0;
                }
                p.skipChildren();
            }
            return 0;
        } catch (IOException e) {
            return 0;
        }
    }

    /** State kept in memory only. */
    public static LastKnownGood inMemory() {
        return new LastKnownGood(null, bytes -> false);
    }

    /** Whether this state survives a restart. */
    public boolean persistent() {
        return dir != null;
    }

    /**
     * Whether it holds no listing or pointer from an earlier run: a cache that never served this
     * store (always, in memory).
     */
    public boolean knowsNothing() {
        if (dir == null) {
            return true;
        }
        try (java.util.stream.Stream<Path> files = Files.list(dir.resolve("known"))) {
            return files.findAny().isEmpty();
        } catch (IOException | UncheckedIOException e) {
            return true;
        }
    }

    // ---------------------------------------------------------------- listings and pointers

    /** The last listing of {@code prefix} the store gave. */
    public Optional<Listing> listing(String prefix) {
        return known(listings, prefix, Listing.class);
    }

    /** What {@code memory} holds for {@code key}, else what its file holds (then kept in memory). */
    private <T> Optional<T> known(Map<String, T> memory, String key, Class<T> type) {
        T v = memory.get(key);
        if (v == null && dir != null) {
            v = readKnown(key, type);
            if (v != null) {
                memory.putIfAbsent(key, v);
            }
        }
        return Optional.ofNullable(v);
    }

    /** The store just listed {@code prefix}. */
    public void listed(String prefix, List<String> children, Instant now) {
        Listing before = listings.put(prefix, new Listing(children, now));
        boolean changed = before == null || !before.children().equals(children);
        writeKnown(prefix, changed, now, g -> {
            g.writeArrayFieldStart("children");
            for (String c : children) {
                g.writeString(c);
            }
            g.writeEndArray();
            g.writeStringField("sum", sum(prefix, now.toEpochMilli(), children, false, null, null));
        });
    }

    /** The last state of the pointer at {@code key}. */
    public Optional<Pointer> pointer(String key) {
        return known(pointers, key, Pointer.class);
    }

    /** The store just confirmed the pointer at {@code key}: {@code version} (null: absent) with {@code tag}. */
    public void pointed(String key, String version, String tag, Instant now) {
        Pointer before = pointers.put(key, new Pointer(version, tag, now));
        boolean changed = before == null || !java.util.Objects.equals(before.version(), version)
                || !java.util.Objects.equals(before.tag(), tag);
        writeKnown(key, changed, now, g -> {
            if (version == null) {
                g.writeNullField("version");
            } else {
                g.writeStringField("version", version);
            }
            if (tag != null) {
                g.writeStringField("tag", tag);
            }
            g.writeStringField("sum", sum(key, now.toEpochMilli(), null, true, version, tag));
        });
    }

    /**
     * The SHA-256 of what a kept listing or pointer says, written beside it and checked when it is
     * read back: a flipped bit in a saved pointer (audit 23: a version id with one capital letter,
     * kept for ever since the store's 304 confirmed its ETag) reads as damage, and the pointer is
     * read from the store again. Files of an older warpd have none and are checked by shape.
     */
    static String sum(String key, long confirmed, List<String> children, boolean pointer, String version, String tag) {
        java.security.MessageDigest d = BlobId.sha256();
        java.util.function.Consumer<String> add = t -> {
            d.update(t == null ? new byte[] {1} : t.getBytes(StandardCharsets.UTF_8));
            d.update((byte) 0);
        };
        add.accept(key);
        add.accept(Long.toString(confirmed));
        if (children != null) {
            children.forEach(add);
        }
        if (pointer) {
            add.accept(version);
            add.accept(tag);
        }
        return HexFormat.of().formatHex(d.digest());
    }

    private interface Fields {
        void write(JsonGenerator g) throws IOException;
    }

    private void writeKnown(String key, boolean changed, Instant now, Fields fields) {
        if (dir == null) {
            return;
        }
        Instant last = written.get(key);
        if (!changed && last != null && Duration.between(last, now).compareTo(CONFIRMATION_WRITE_EVERY) < 0) {
            return;
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream(256);
        try (JsonGenerator g = JSON.createGenerator(out, JsonEncoding.UTF8)) {
            g.writeStartObject();
            g.writeStringField("key", key);
            g.writeNumberField("confirmed_at", now.toEpochMilli());
            fields.write(g);
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException("writing JSON to memory cannot fail", e);
        }
        if (writeAtomically(knownFile(key), out.toByteArray())) {
            written.put(key, now);
        }
    }

    private Path knownFile(String key) {
        byte[] digest = BlobId.sha256().digest(key.getBytes(StandardCharsets.UTF_8));
        return dir.resolve("known").resolve(HexFormat.of().formatHex(digest) + ".json");
    }

    private static final java.util.regex.Pattern VERSION_ID = java.util.regex.Pattern.compile("[0-9a-f]{64}");

    /** A listing or pointer read back from disk, or null if absent or damaged (then deleted). */
    private <T> T readKnown(String key, Class<T> type) {
        Path file = knownFile(key);
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(file);
        } catch (NoSuchFileException e) {
            return null;
        } catch (IOException e) {
            LOG.warn("cannot read the catalog state {} ({}); treating it as unknown", file, e.toString());
            return null;
        }
        try {
            return parseKnown(key, bytes, type);
        } catch (IOException | RuntimeException e) {
            LOG.warn("the catalog state {} is damaged ({}); deleting it", file, e.getMessage());
            deleteIfStill(file, bytes);
            return null;
        }
    }

    /**
     * A listing or pointer from its file's bytes.
     *
     * @throws IOException if the bytes are not one, or name another key
     */
    <T> T parseKnown(String key, byte[] bytes, Class<T> type) throws IOException {
        try (JsonParser p = JSON.createParser(bytes)) {
            String storedKey = null;
            Long confirmed = null;
            List<String> children = null;
            String version = null;
            boolean hasVersion = false;
            String tag = null;
            String sum = null;
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw new IOException("not a JSON object");
            }
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String field = p.currentName();
                JsonToken t = p.nextToken();
                switch (field) {
                    case "key" -> storedKey = p.getValueAsString();
                    case "confirmed_at" -> confirmed = t == JsonToken.VALUE_NUMBER_INT ? p.getLongValue() : null;
                    case "children" -> {
                        if (t != JsonToken.START_ARRAY) {
                            throw new IOException("children is not an array");
                        }
                        children = new ArrayList<>();
                        while (p.nextToken() == JsonToken.VALUE_STRING) {
                            children.add(p.getText());
                        }
                        if (p.currentToken() != JsonToken.END_ARRAY) {
                            throw new IOException("children holds a non-string");
                        }
                    }
                    case "version" -> {
                        hasVersion = true;
                        version = t == JsonToken.VALUE_NULL ? null : p.getValueAsString();
                    }
                    case "tag" -> tag = p.getValueAsString();
                    case "sum" -> sum = p.getValueAsString();
                    default -> p.skipChildren();
                }
            }
            if (!key.equals(storedKey) || confirmed == null) {
                throw new IOException("names key " + storedKey + ", not " + key);
            }
            if (sum != null && !sum.equals(sum(key, confirmed, type == Listing.class ? children : null,
                    type == Pointer.class, version, tag))) {
                throw new IOException("its content does not match its SHA-256");
            }
            if (version != null && !VERSION_ID.matcher(version).matches()) {
                throw new IOException("its version '" + version + "' is not a version id (64 lowercase hex digits)");
            }
            Instant at = Instant.ofEpochMilli(confirmed);
            written.put(key, at);
            if (type == Listing.class && children != null) {
                return type.cast(new Listing(children, at));
            }
            if (type == Pointer.class && hasVersion) {
                return type.cast(new Pointer(version, tag, at));
            }
            throw new IOException("holds no " + type.getSimpleName().toLowerCase(java.util.Locale.ROOT));
        }
    }

    // ---------------------------------------------------------------- manifests and blobs

    /**
     * A manifest as the store held it at {@code key} (its version key), or empty. The caller
     * verifies it against its version and calls {@link #forgetManifest} if it does not.
     */
    public Optional<byte[]> manifest(String key) {
        if (dir == null) {
            return Optional.empty();
        }
        // Format 1's folder first (where releases before the per-format folders kept every
        // format), then the others: a copy is written to its format's folder before the one in
        // manifests/ is deleted, so a reader racing a move finds one of them (the review).
        for (int format : MANIFEST_FORMATS) {
            try {
                return Optional.of(Files.readAllBytes(manifestFile(key, format)));
            } catch (NoSuchFileException e) {
                // not in this one
            } catch (IOException e) {
                LOG.warn("cannot read the kept manifest {} ({}); treating it as unknown", key, e.toString());
                return Optional.empty();
            }
        }
        return Optional.empty();
    }

    /**
     * Keeps a verified manifest of format {@code format} (once; a version never changes). One of
     * format 2 or more goes to {@code manifests.format-N/}, where a release that cannot read it
     * does not look: one that found it in {@code manifests/} took it for damage and deleted it
     * (audit 42: a downgraded warpd deleted every kept manifest of format 2 to 4, and the
     * upgraded one could not serve those versions while the store was down). Copies an earlier
     * release kept in {@code manifests/} move there at start ({@link #moveManifestsToTheirFormats}).
     */
    public void keepManifest(String key, byte[] json, int format) {
        if (dir != null && !Files.exists(manifestFile(key, format))) {
            writeAtomically(manifestFile(key, format), json);
        }
    }

    /**
     * Drops a kept manifest that failed verification (in whichever folder it is), unless it no
     * longer holds {@code damaged}. A newer release keeps a format this one cannot read in a
     * folder this one does not read, so one found here is damage too.
     */
    public void forgetManifest(String key, byte[] damaged) {
        if (dir != null) {
            LOG.warn("the kept manifest {} does not verify; deleting it", key);
            for (int format : MANIFEST_FORMATS) {
                deleteIfStill(manifestFile(key, format), damaged);
            }
        }
    }

    private Path manifestFile(String key, int format) {
        // Version keys are datasets/<ws>/<name>/versions/<hex>.json: names already validated, no '..'.
        return dir.resolve(format > 1 ? "manifests.format-" + format : "manifests").resolve(key.replace("/versions/", "/"));
    }

    /** A kept metadata blob, verified against its id, or empty (a damaged one is deleted). */
    public Optional<byte[]> blob(BlobId id) {
        if (dir == null) {
            return Optional.empty();
        }
        Path file = dir.resolve("blobs").resolve(id.hex());
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(file);
        } catch (NoSuchFileException e) {
            return Optional.empty();
        } catch (IOException e) {
            LOG.warn("cannot read the kept blob {} ({}); treating it as unknown", file, e.toString());
            return Optional.empty();
        }
        if (!Arrays.equals(BlobId.sha256().digest(bytes), id.digest())) {
            LOG.warn("the kept blob {} does not match its SHA-256; deleting it", file);
            deleteIfStill(file, bytes);
            return Optional.empty();
        }
        return Optional.of(bytes);
    }

    /** Keeps a verified metadata blob (a member index) so that it is known without the store. */
    public void keepBlob(BlobId id, byte[] bytes) {
        keepBlob(id, bytes, bytes.length);
    }

    /**
     * Keeps the verified metadata blob {@code bytes[0, len)} (a member index, perhaps in a
     * reused buffer: it is written before this returns).
     *
     * @return whether it is kept (now or before); false if this state is in memory or the disk refused (logged)
     */
    public boolean keepBlob(BlobId id, byte[] bytes, int len) {
        if (dir == null) {
            return false;
        }
        Path file = dir.resolve("blobs").resolve(id.hex());
        if (Files.exists(file)) {
            return true;
        }
        if (room(len) && writeAtomically(file, bytes, len)) {
            usedFiles.add(id); // written now: its modification time says so
            return true;
        }
        return false;
    }

    private static boolean verifies(Path file, BlobId id) throws IOException {
        java.security.MessageDigest sha = BlobId.sha256();
        try (java.io.InputStream in = Files.newInputStream(file)) {
            byte[] buf = new byte[1 << 16];
            for (int n; (n = in.read(buf)) > 0; ) {
                sha.update(buf, 0, n);
            }
        }
        return Arrays.equals(sha.digest(), id.digest());
    }

    /**
     * The file of a kept metadata blob, to be read in place (a member index of any size), or
     * empty if none is kept (or this state is in memory). <b>Not verified here:</b> its reader
     * checks it against {@code id} as it reads it (warpd's page cache of index files checks its
     * SHA-256 at the first open in a process, or each page against CRC32Cs taken from the fetched
     * bytes) and calls {@link #forgetBlobFile} when it does not match. Hashing it here too read
     * and hashed each kept index twice at its first open. The first ask in this process marks the
     * file used, for {@link #trimBlobs}.
     */
    public Optional<Path> keptBlobFile(BlobId id) {
        if (dir == null) {
            return Optional.empty();
        }
        Path file = dir.resolve("blobs").resolve(id.hex());
        if (!Files.isRegularFile(file)) {
            usedFiles.remove(id);
            return Optional.empty();
        }
        if (usedFiles.add(id)) {
            markUsed(file);
        }
        return Optional.of(file);
    }

    /**
     * Deletes the kept file of blob {@code id}, found damaged while it was read (the
     * reader logs it), so that the blob is fetched again, unless the file verifies now (another
     * reader of the blob put a good copy in its place): under the file's lock.
     */
    public void forgetBlobFile(BlobId id) {
        if (dir == null) {
            return;
        }
        Path file = dir.resolve("blobs").resolve(id.hex());
        synchronized (lockOf(file)) {
            // Another reader of the same blob may have just put a good copy in its place: keep that one.
            try {
                if (verifies(file, id)) {
                    return;
                }
            } catch (IOException e) {
                // gone or unreadable: deleted below (a missing file stays missing)
            }
            deleteQuietly(file);
        }
    }

    /**
     * Deletes kept member indexes, least recently used first, until those left hold at most
     * {@code budgetBytes}: for warpd's start, before any is open (one deleted under an open
     * index would be fetched again at its next page read). Used means opened by a warpd process: the first open in
     * each process sets the file's modification time. Manifests, pointers and listings stay.
     *
     * @return the bytes deleted
     */
    public long trimBlobs(long budgetBytes) {
        if (dir == null) {
            return 0;
        }
        record Kept(Path file, long size, long used) {
        }
        List<Kept> kept = new ArrayList<>();
        long total = 0;
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir.resolve("blobs"))) {
            for (Path f : files) {
                java.nio.file.attribute.BasicFileAttributes a = Files.readAttributes(f,
                        java.nio.file.attribute.BasicFileAttributes.class);
                kept.add(new Kept(f, a.size(), a.lastModifiedTime().toMillis()));
                total += a.size();
            }
        } catch (IOException e) {
            LOG.warn("cannot list the kept member indexes in {} ({}); none is deleted", dir.resolve("blobs"), e.toString());
            return 0;
        }
        kept.sort(java.util.Comparator.comparingLong(Kept::used));
        long deleted = 0;
        int files = 0;
        for (Kept k : kept) {
            if (total - deleted <= budgetBytes) {
                break;
            }
            deleteQuietly(k.file());
            deleted += k.size();
            files++;
        }
        if (files > 0) {
            LOG.info("deleted {} kept member index file(s), {} bytes, least recently used first: they held {} bytes, over"
                    + " their budget of {} (an eighth of --cache-size); they are fetched again when a version needs them",
                    files, deleted, total, budgetBytes);
        }
        return deleted;
    }

    /** Marks a kept file as used now, for {@link #trimBlobs}; quietly (only the eviction order is lost). */
    private static void markUsed(Path file) {
        try {
            Files.setLastModifiedTime(file, java.nio.file.attribute.FileTime.fromMillis(System.currentTimeMillis()));
        } catch (IOException e) {
            LOG.debug("cannot mark {} as used: {}", file, e.toString());
        }
    }

    /** Writes a blob's bytes to a stream (see {@link #keepBlob(BlobId, long, BlobWriter)}). */
    @FunctionalInterface
    public interface BlobWriter {
        void writeTo(java.io.OutputStream out) throws IOException;
    }

    /**
     * Keeps a metadata blob too large to pass as an array: {@code writer} streams its (verified)
     * bytes, which are checked against {@code id} as they are written and renamed into place.
     *
     * @return the kept file, or empty if this state is in memory or the disk refused (logged)
     * @throws IllegalStateException if the written bytes do not match {@code id}
     */
    public Optional<Path> keepBlob(BlobId id, long size, BlobWriter writer) {
        if (dir == null || !room(size) || !writes.begin()) {
            return Optional.empty();
        }
        try {
            return keepStreamed(id, writer);
        } finally {
            writes.end();
        }
    }

    private Optional<Path> keepStreamed(BlobId id, BlobWriter writer) {
        Path file = dir.resolve("blobs").resolve(id.hex());
        if (!folders(file.getParent())) {
            return Optional.empty();
        }
        Path tmp = dir.resolve("tmp").resolve(id.hex() + "." + tmpCounter.incrementAndGet());
        java.security.MessageDigest sha = BlobId.sha256();
        try {
            try (java.io.OutputStream out = new java.security.DigestOutputStream(
                    new java.io.BufferedOutputStream(Files.newOutputStream(tmp), 1 << 16), sha)) {
                writer.writeTo(out);
            }
            if (!Arrays.equals(sha.digest(), id.digest())) {
                throw new IllegalStateException("the bytes written for blob " + id + " do not match its SHA-256");
            }
            moveIntoPlace(tmp, file);
            usedFiles.add(id);
            return Optional.of(file);
        } catch (IOException e) {
            cannotKeep(file, e);
            return Optional.empty();
        } finally {
            deleteQuietly(tmp);
        }
    }

    // ---------------------------------------------------------------- files

    /** Writes {@code file} through a temp file and a rename; false (logged) if the disk refused. */
    private boolean writeAtomically(Path file, byte[] bytes) {
        return writeAtomically(file, bytes, bytes.length);
    }

    private boolean writeAtomically(Path file, byte[] bytes, int len) {
        if (!writes.begin()) {
            return false;
        }
        try {
            return writeThroughTmp(file, bytes, len);
        } finally {
            writes.end();
        }
    }

    private boolean writeThroughTmp(Path file, byte[] bytes, int len) {
        Path tmp = dir.resolve("tmp").resolve(file.getFileName() + "." + tmpCounter.incrementAndGet());
        try {
            if (!folders(file.getParent())) {
                return false;
            }
            try (java.io.OutputStream out = Files.newOutputStream(tmp)) {
                out.write(bytes, 0, len);
            }
            moveIntoPlace(tmp, file);
            return true;
        } catch (IOException e) {
            // Only the outage fallback loses: the answer itself was served.
            cannotKeep(file, e);
            deleteQuietly(tmp);
            return false;
        }
    }

    /**
     * Makes {@code parent} and {@code tmp/} when they are missing (the catalog's folder deleted
     * under a running warpd: audit 31 found every write failing from then on, offline state lost
     * for the rest of the run), its owner's only (0700) as at start; not when the cache directory
     * itself is gone (deleted on purpose, as the block cache leaves it).
     *
     * @return whether they are there
     */
    private boolean folders(Path parent) {
        Path tmp = dir.resolve("tmp");
        if (Files.isDirectory(parent) && Files.isDirectory(tmp)) {
            return true;
        }
        Path cacheDir = dir.getParent() == null ? null : dir.getParent().getParent();
        if (cacheDir != null && !Files.isDirectory(cacheDir)) {
            return false;
        }
        java.nio.file.attribute.FileAttribute<?> ownerOnly = java.nio.file.attribute.PosixFilePermissions
                .asFileAttribute(java.nio.file.attribute.PosixFilePermissions.fromString("rwx------"));
        try {
            Files.createDirectories(tmp, ownerOnly);
            Files.createDirectories(parent, ownerOnly);
            return true;
        } catch (IOException e) {
            cannotKeep(parent, e);
            return false;
        }
    }

    /** Logs a write the state could not keep, at most once a minute (a deleted or read-only disk fails every one). */
    private void cannotKeep(Path file, Exception e) {
        long now = System.nanoTime();
        long last = lastCannotKeep.get();
        if (last == 0 || now - last >= 60_000_000_000L) {
            if (lastCannotKeep.compareAndSet(last, now == 0 ? 1 : now)) {
                LOG.warn("cannot keep {} in the catalog state ({}); it will not be known offline (said at most once a"
                        + " minute)", file, e.toString());
            }
        }
    }

    private final java.util.concurrent.atomic.AtomicLong lastCannotKeep = new java.util.concurrent.atomic.AtomicLong();

    /**
     * Locks striped by file: a file is moved into place, or deleted as damaged, under its lock.
     * Two readers may find one damaged file; the first reads the store again and writes a good
     * copy, and the second must not then delete that copy (CI, session 25).
     */
    private final Object[] fileLocks = java.util.stream.IntStream.range(0, 64).mapToObj(i -> new Object()).toArray();

    private Object lockOf(Path file) {
        return fileLocks[Math.floorMod(file.hashCode(), fileLocks.length)];
    }

    private void moveIntoPlace(Path tmp, Path file) throws IOException {
        synchronized (lockOf(file)) {
            Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        }
    }

    /** Deletes {@code file} if it still holds {@code damaged}: not a good copy written since it was read. */
    private void deleteIfStill(Path file, byte[] damaged) {
        synchronized (lockOf(file)) {
            try {
                if (!Arrays.equals(Files.readAllBytes(file), damaged)) {
                    return;
                }
            } catch (NoSuchFileException e) {
                return;
            } catch (IOException e) {
                // Unreadable now as it was readable before: delete it as damaged.
            }
            deleteQuietly(file);
        }
    }

    private static void deleteQuietly(Path p) {
        try {
            Files.deleteIfExists(p);
        } catch (IOException e) {
            LOG.warn("could not delete {}: {}", p, e.toString());
        }
    }
}
