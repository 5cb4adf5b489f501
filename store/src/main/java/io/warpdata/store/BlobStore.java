package io.warpdata.store;

import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.IntConsumer;

/**
 * The remote store, as small as Iceberg's FileIO: keys are store-relative ('/'-separated, see
 * {@link StoreLayout}); implementations map them under their root (an S3 prefix or a local
 * directory). Implementations translate their own failures into the {@link StoreException}
 * family; nothing vendor-specific leaks past them. Thread-safe.
 */
public interface BlobStore extends AutoCloseable {
    /** The largest pointer object (latest, a tag, a branch) Warp reads: they are under 200 bytes. */
    int POINTER_MAX_BYTES = 64 << 10;

    /**
     * Length of the object at {@code key}.
     *
     * @return the length, or empty if there is no such object
     * @throws StoreException on any failure other than absence
     */
    OptionalLong length(String key);

    /**
     * Reads exactly {@code len} bytes of the object at {@code key}, starting at {@code offset},
     * into {@code dst[dstOff, dstOff+len)}: one ranged GET for remote stores.
     *
     * @throws BlobNotFoundException if there is no such object
     * @throws StoreException if the range lies beyond the object's end, or on any other failure
     */
    void read(String key, long offset, byte[] dst, int dstOff, int len);

    /**
     * As {@link #read(String, long, byte[], int, int)}, also telling {@code arrived} how many
     * bytes from {@code dstOff} are in place while they stream in (non-decreasing, ending with
     * {@code len}), so that a caller can use the start of a large range before its end arrives.
     * The default reads the whole range, then reports it once. {@code arrived} runs on the
     * calling thread; an exception it throws ends the read and propagates unchanged.
     *
     * @throws BlobNotFoundException if there is no such object
     * @throws StoreException if the range lies beyond the object's end, or on any other failure
     */
    default void read(String key, long offset, byte[] dst, int dstOff, int len, IntConsumer arrived) {
        read(key, offset, dst, dstOff, len);
        arrived.accept(len);
    }

    /**
     * Reads a whole small object (manifests, pointers, indexes).
     *
     * @throws BlobNotFoundException if there is no such object
     * @throws StoreException on any other failure
     */
    byte[] get(String key);

    /**
     * Reads a whole small object of at most {@code maxBytes} (a manifest): an object that is
     * larger is refused without being read beyond the limit (S3: one ranged GET). The default
     * reads it whole, then checks; stores override it.
     *
     * @throws ObjectTooLargeException if the object is larger than {@code maxBytes}
     * @throws BlobNotFoundException if there is no such object
     * @throws StoreException on any other failure
     */
    default byte[] get(String key, int maxBytes) {
        byte[] data = get(key);
        if (data.length > maxBytes) {
            throw new ObjectTooLargeException(describe() + "/" + key, data.length, maxBytes);
        }
        return data;
    }

    /**
     * Reads a small object of at most {@code maxBytes} (a pointer) unless it still has the
     * version tag {@code ifNoneMatch}: on S3 a conditional GET, answered 304 without a body when
     * nothing changed, so that re-checking a pointer costs one tiny request. The default reads
     * the object and compares content tags ({@link Versioned#ofContent}).
     *
     * @param ifNoneMatch the tag of the version the caller has, or null to read in any case
     * @return the object and its tag, or null if it still has tag {@code ifNoneMatch}
     * @throws ObjectTooLargeException if the object is larger than {@code maxBytes}
     * @throws BlobNotFoundException if there is no such object
     * @throws StoreException on any other failure
     */
    default Versioned getIfChanged(String key, String ifNoneMatch, int maxBytes) {
        Versioned now = Versioned.ofContent(get(key, maxBytes));
        return now.tag().equals(ifNoneMatch) ? null : now;
    }

    /**
     * Writes a small mutable object (a pointer) only if it is still as the caller last saw it:
     * absent when {@code expectedTag} is null, else with version tag {@code expectedTag}. Of two
     * writers that saw the same state, exactly one succeeds. S3 does this with a conditional PUT
     * (If-None-Match: * / If-Match) and reads the object back to catch servers that ignore the
     * condition; a local directory with a compare and rename under a file lock. This default
     * compares, writes and reads back: it catches a lost race in most interleavings but not all,
     * and stores override it.
     *
     * @return the tag of the object as written
     * @throws PointerMovedException if the object is no longer as the caller saw it
     * @throws StoreException on any other failure
     */
    default String putIfUnchanged(String key, byte[] data, String expectedTag) {
        String now = currentTag(key);
        if (!java.util.Objects.equals(now, expectedTag)) {
            throw new PointerMovedException(describe() + "/" + key, now == null ? "it is gone" : "it was rewritten");
        }
        put(key, data);
        Versioned back = getIfChanged(key, null, Math.max(data.length, POINTER_MAX_BYTES));
        if (!java.util.Arrays.equals(back.data(), data)) {
            throw new PointerMovedException(describe() + "/" + key, "another write landed at the same time");
        }
        return back.tag();
    }

    /**
     * Whether the store itself refuses a write that loses a race on a pointer, as
     * {@link #putIfUnchanged} needs for exactly one of two racing writers to win: writes {@code
     * probeKey}, asks to create it again on condition that it does not exist, and deletes it. Empty
     * when this store has no such server to ask (a local directory locks instead). For {@code
     * warpctl doctor}; it writes to the store.
     *
     * @throws StoreException if the probe cannot be written (read-only credentials) or the store fails
     */
    default Optional<Boolean> enforcesConditionalWrites(String probeKey) {
        return Optional.empty();
    }

    /**
     * Deletes a small mutable object (a tag) if it still has version tag {@code expectedTag}.
     *
     * @throws PointerMovedException if it changed or is gone
     * @throws StoreException on any other failure, or if this store cannot delete
     */
    default void deleteIfUnchanged(String key, String expectedTag) {
        String now = currentTag(key);
        if (now == null || !now.equals(expectedTag)) {
            throw new PointerMovedException(describe() + "/" + key, now == null ? "it is gone" : "it was rewritten");
        }
        delete(key);
    }

    /**
     * Deletes an object (pointers; and a blob a publish has just made from a file that changed
     * during its upload, whose bytes are not its hash's: Warp never deletes a good blob).
     * Deleting what is not there is not an error.
     *
     * @throws StoreException on failure, or if this store cannot delete
     */
    default void delete(String key) {
        throw new StoreException("The store " + describe() + " cannot delete " + key,
                "Delete the object with the store's own tools.", null);
    }

    /** The version tag of the object at {@code key}, or null if there is none. */
    private String currentTag(String key) {
        try {
            return getIfChanged(key, null, POINTER_MAX_BYTES).tag();
        } catch (BlobNotFoundException absent) {
            return null;
        }
    }

    /**
     * Writes a small object, replacing any existing one (pointers such as latest.json).
     * Readers see the old or the new object, never a mix.
     *
     * @throws StoreException on failure
     */
    void put(String key, byte[] data);

    /**
     * Writes {@code data} at {@code key} unless an object already exists there (content-addressed
     * keys: an existing object has the same bytes).
     *
     * @return true if written, false if it already existed
     * @throws StoreException on failure
     */
    boolean putIfAbsent(String key, byte[] data);

    /**
     * Uploads the file at {@code source} to {@code key} unless an object already exists there
     * (multipart for large files on S3). Readers never see a partial object.
     *
     * @return true if written, false if it already existed
     * @throws StoreException on failure
     */
    boolean putIfAbsent(String key, Path source);

    /**
     * The immediate children of {@code prefix} (which ends with '/'): object names and
     * sub-"directory" names (the latter with a trailing '/'), sorted, relative to the prefix.
     *
     * @throws StoreException on failure
     */
    List<String> list(String prefix);

    /** A short description for logs and messages, e.g. {@code s3://bucket/prefix}. */
    String describe();

    @Override
    void close();

    /**
     * Attempts the store's client made beyond the first of each call, over all calls (its own
     * retries of 5xx, throttling and resets): each one a request the store saw that no caller
     * counted. 0 for stores without such retries.
     */
    default long clientRetries() {
        return 0;
    }
}
