package io.warpdata.vfs;

import io.warpdata.blobcache.cache.BlobMember;
import io.warpdata.manifest.BlobId;
import io.warpdata.manifest.BlobRef;
import io.warpdata.manifest.TensorHashes;
import io.warpdata.manifest.formats.NpyHeader;
import io.warpdata.manifest.formats.SafetensorsHeader;
import io.warpdata.manifest.formats.TensorPaths;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The tensors of one safetensors member as a folder ({@code F.tensors/} next to
 * {@code F.safetensors}): each tensor of a dtype NumPy knows is {@code KEY.npy}, a valid NPY v1.0
 * file made of a header Warp writes and the tensor's bytes served straight from the shard blob
 * (zero copy: the same blocks, cache and verification as the member); a BF16 tensor, which NumPy
 * has no type for, is {@code KEY.bf16} with its raw bytes. A key with '/' becomes folders. A key
 * that cannot be a path (an empty, {@code .} or {@code ..} component, a component over 255 bytes)
 * is left out of the folder; the tensor stays readable in the safetensors file itself.
 */
public final class TensorFolder {
    private final BlobRef shard;
    private final long dataStart;
    /**
     * Path of every file ("a/b.npy"), sorted: a file's position here is the same every time the
     * folder is made from its header, and numbers its inode ({@link TensorInodes}). A file's
     * content is made when asked for, from the arrays beside: the folder keeps about 100 bytes a
     * tensor, not the 900 its content objects, names and listing entries took (audit 40: two
     * files of 120,000 tensors did not fit the folders' budget together, and a loader reading
     * both made each folder again at almost every lookup).
     */
    private final String[] paths;
    /** Where each file's tensor bytes are in the shard, and how many. */
    private final long[] starts;
    private final long[] lengths;
    /** Each file's NPY header in {@link #npyHeaders}, or -1 for raw bytes (BF16). */
    private final int[] headerOf;
    /** NPY headers, one per dtype and shape (an embedding table's are all alike). */
    private final FileContent.Inline[] npyHeaders;
    /** Each tensor's SHA-256, 32 bytes a file, or null: read through the shard's blocks. */
    private final byte[] hashes;
    /** Every folder below the root ("a", "a/b"), sorted. */
    private final String[] dirs;
    /**
     * Each folder's entries, sorted by name: a file as its position, a subfolder as
     * {@code -1 - its index in dirs}. Listed by index, a chunk at a time (audit 40: a listing
     * that made all of a flat folder's 120,000 entries for each chunk took 92 s).
     */
    private final Map<String, int[]> listings;
    private final Map<String, Integer> subfolders;
    /** What the folder keeps on the heap, about ({@link #heapBytes}). */
    private final long heapBytes;

    private TensorFolder(BlobRef shard, long dataStart, String[] paths, long[] starts, long[] lengths, int[] headerOf,
            FileContent.Inline[] npyHeaders, byte[] hashes, String[] dirs) {
        this.shard = shard;
        this.dataStart = dataStart;
        this.paths = paths;
        this.starts = starts;
        this.lengths = lengths;
        this.headerOf = headerOf;
        this.npyHeaders = npyHeaders;
        this.hashes = hashes;
        this.dirs = dirs;
        Map<String, List<Integer>> byDir = new HashMap<>();
        byDir.put("", new ArrayList<>());
        Map<String, Integer> subs = new HashMap<>();
        for (int d = 0; d < dirs.length; d++) {
            String parent = parent(dirs[d]);
            byDir.computeIfAbsent(parent, k -> new ArrayList<>()).add(-1 - d);
            byDir.computeIfAbsent(dirs[d], k -> new ArrayList<>());
            subs.merge(parent, 1, Integer::sum);
        }
        for (int i = 0; i < paths.length; i++) {
            byDir.get(parent(paths[i])).add(i);
        }
        Map<String, int[]> out = new HashMap<>();
        // Each folder's subfolders came first, then its files, each already in name order (their
        // paths share the folder's prefix): merged.
        byDir.forEach((d, entries) -> {
            int split = 0;
            while (split < entries.size() && entries.get(split) < 0) {
                split++;
            }
            int[] merged = new int[entries.size()];
            for (int a = 0, b = split, k = 0; k < merged.length; k++) {
                boolean folderFirst = b == entries.size()
                        || (a < split && entryName(entries.get(a)).compareTo(entryName(entries.get(b))) < 0);
                merged[k] = folderFirst ? entries.get(a++) : entries.get(b++);
            }
            out.put(d, merged);
        });
        this.listings = out;
        this.subfolders = subs;
        long bytes = 4096 + (long) TensorFolders.BYTES_PER_TENSOR * paths.length + (hashes == null ? 0 : hashes.length);
        for (String p : paths) {
            bytes += stringBytes(p);
        }
        for (String d : dirs) {
            bytes += 160 + stringBytes(d); // its String, its listing's array and map entry, its count
        }
        for (FileContent.Inline h : npyHeaders) {
            bytes += 48 + h.bytes().length; // one per dtype and shape: one a tensor where every shape differs
        }
        this.heapBytes = bytes;
    }

    /** A String's characters on the heap: a byte each, two where one is beyond Latin-1 (8-byte aligned). */
    private static long stringBytes(String s) {
        boolean latin1 = s.chars().allMatch(c -> c < 256);
        return ((long) s.length() * (latin1 ? 1 : 2) + 7) & ~7;
    }

    /**
     * About how much heap the folder keeps: {@link TensorFolders#BYTES_PER_TENSOR} a tensor, its
     * path and its hash, its folders and its NPY headers.
     */
    public long heapBytes() {
        return heapBytes;
    }

    private static String parent(String path) {
        int slash = path.lastIndexOf('/');
        return slash < 0 ? "" : path.substring(0, slash);
    }

    private static String name(String path) {
        return path.substring(path.lastIndexOf('/') + 1);
    }

    private String entryName(int entry) {
        return name(entry >= 0 ? paths[entry] : dirs[-1 - entry]);
    }

    /**
     * The folder of a safetensors file stored in {@code shard} from {@code memberOffset}, whose
     * header is {@code header}.
     */
    public static TensorFolder of(BlobRef shard, long memberOffset, SafetensorsHeader header) {
        return of(shard, memberOffset, header, null);
    }

    /**
     * The same, each tensor read as a {@link FileContent.HashedRange} of its own when
     * {@code hashes} (its artifact's {@link io.warpdata.manifest.TensorHashes} for this file, one
     * per tensor in the order of {@link TensorHashes#BY_OFFSET}) is given; else through the blocks.
     */
    public static TensorFolder of(BlobRef shard, long memberOffset, SafetensorsHeader header, List<BlobId> hashes) {
        long dataStart = memberOffset + header.dataStart();
        Map<SafetensorsHeader.Tensor, BlobId> hashOf = new IdentityHashMap<>();
        if (hashes != null) {
            List<SafetensorsHeader.Tensor> byOffset = new ArrayList<>(header.tensors());
            byOffset.sort(TensorHashes.BY_OFFSET);
            for (int i = 0; i < byOffset.size(); i++) {
                hashOf.put(byOffset.get(i), hashes.get(i));
            }
        }
        TensorPaths.Layout layout = TensorPaths.of(header.tensors());
        TreeMap<String, SafetensorsHeader.Tensor> files = layout.files();
        TreeSet<String> dirs = layout.folders();
        int n = files.size();
        String[] paths = new String[n];
        long[] starts = new long[n];
        long[] lengths = new long[n];
        int[] headerOf = new int[n];
        byte[] digests = hashes == null ? null : new byte[32 * n];
        Map<List<Object>, Integer> headerIndex = new HashMap<>();
        List<FileContent.Inline> npyHeaders = new ArrayList<>();
        int i = 0;
        for (Map.Entry<String, SafetensorsHeader.Tensor> f : files.entrySet()) {
            SafetensorsHeader.Tensor t = f.getValue();
            paths[i] = f.getKey();
            starts[i] = dataStart + t.begin();
            lengths[i] = t.byteSize();
            Optional<String> descr = NpyHeader.descr(t.dtype());
            headerOf[i] = descr.isEmpty() ? -1 : headerIndex.computeIfAbsent(List.of(descr.get(), t.shape()), k -> {
                npyHeaders.add(new FileContent.Inline(NpyHeader.of(descr.get(), t.shape())));
                return npyHeaders.size() - 1;
            });
            BlobId hash = hashOf.get(t);
            if (digests != null && hash != null) {
                System.arraycopy(hash.digest(), 0, digests, 32 * i, 32);
            }
            i++;
        }
        return new TensorFolder(shard, dataStart, paths, starts, lengths, headerOf,
                npyHeaders.toArray(new FileContent.Inline[0]), digests, dirs.toArray(new String[0]));
    }

    /** The file at {@code path}, if there is one. */
    public Optional<FileContent> file(String path) {
        int i = position(path);
        return i < 0 ? Optional.empty() : Optional.of(file(i));
    }

    /** The position of the file at {@code path} (0 to {@link #fileCount()} - 1), or -1 if there is none. */
    public int position(String path) {
        int i = Arrays.binarySearch(paths, path);
        return i < 0 ? -1 : i;
    }

    /**
     * The file at {@code position}: its NPY header and the tensor's bytes in the shard (read
     * through the shard's blocks, or as a range of its own with its own hash), or the raw bytes.
     */
    public FileContent file(int position) {
        long start = starts[position];
        long length = lengths[position];
        FileContent data = hashes == null ? new FileContent.BlobSlice(shard, start, length)
                : new FileContent.HashedRange(BlobMember.lookup(shard, start, length,
                        BlobId.fromDigest(Arrays.copyOfRange(hashes, 32 * position, 32 * position + 32))));
        int h = headerOf[position];
        return h < 0 ? data : FileContent.Pieces.of(npyHeaders[h], data);
    }

    /** The path in the folder of the file at {@code position}. */
    public String path(int position) {
        return paths[position];
    }

    /** Whether {@code path} is a folder ({@code ""}: the root). */
    public boolean isDirectory(String path) {
        return path.isEmpty() || Arrays.binarySearch(dirs, path) >= 0;
    }

    /**
     * One entry of a folder: a name, and the file's content and {@link #position} or null and -1
     * for a subfolder.
     */
    public record Child(String name, FileContent file, int position) {
    }

    /** How many entries folder {@code dir} has, files and subfolders (0 for no folder). */
    public int childCount(String dir) {
        int[] entries = listings.get(dir);
        return entries == null ? 0 : entries.length;
    }

    /** Entry {@code i} of folder {@code dir}, in name order: made on each call. */
    public Child child(String dir, int i) {
        int entry = listings.get(dir)[i];
        return entry >= 0 ? new Child(name(paths[entry]), file(entry), entry) : new Child(entryName(entry), null, -1);
    }

    /** The entries of folder {@code dir}, files and subfolders, sorted by name (empty for no folder). */
    public List<Child> children(String dir) {
        List<Child> out = new ArrayList<>();
        for (int i = 0; i < childCount(dir); i++) {
            out.add(child(dir, i));
        }
        return out;
    }

    /** Subfolders of {@code dir}, for its link count. */
    public long childDirectoryCount(String dir) {
        return subfolders.getOrDefault(dir, 0);
    }

    /** Files in the folder, all levels. */
    public int fileCount() {
        return paths.length;
    }

    @Override
    public String toString() {
        return "TensorFolder[" + paths.length + " tensors in blob " + shard.id() + " from " + dataStart + "]";
    }
}
