package io.warpdata.vfs;

import io.warpdata.blobcache.cache.BlobMember;
import io.warpdata.manifest.BlobId;
import io.warpdata.manifest.BlobRef;
import io.warpdata.manifest.TensorHashes;
import io.warpdata.manifest.formats.NpyHeader;
import io.warpdata.manifest.formats.SafetensorsHeader;

import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
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
    /** Longest file name the kernel accepts. */
    private static final int MAX_NAME_BYTES = 255;

    private final BlobRef shard;
    private final long dataStart;
    /**
     * Path of every file ("a/b.npy"), sorted, and each one's content: a file's position here is
     * the same every time the folder is made from its header, and numbers its inode
     * ({@link TensorInodes}).
     */
    private final String[] paths;
    private final FileContent[] contents;
    /** Every folder below the root ("a", "a/b"). */
    private final TreeSet<String> dirs;
    /** Each folder's entries, made once: a folder of a million tensors lists in pages. */
    private final Map<String, List<Child>> listings;

    private TensorFolder(BlobRef shard, long dataStart, NavigableMap<String, FileContent> files, TreeSet<String> dirs) {
        this.shard = shard;
        this.dataStart = dataStart;
        this.paths = files.keySet().toArray(new String[0]);
        this.contents = files.values().toArray(new FileContent[0]);
        this.dirs = dirs;
        Map<String, TreeMap<String, Child>> byDir = new java.util.HashMap<>();
        byDir.put("", new TreeMap<>());
        for (String d : dirs) {
            int slash = d.lastIndexOf('/');
            String parent = slash < 0 ? "" : d.substring(0, slash);
            byDir.computeIfAbsent(parent, k -> new TreeMap<>()).put(d.substring(slash + 1), new Child(d.substring(slash + 1), null, -1));
            byDir.computeIfAbsent(d, k -> new TreeMap<>());
        }
        for (int i = 0; i < paths.length; i++) {
            int slash = paths[i].lastIndexOf('/');
            String parent = slash < 0 ? "" : paths[i].substring(0, slash);
            String name = paths[i].substring(slash + 1);
            byDir.get(parent).put(name, new Child(name, contents[i], i));
        }
        Map<String, List<Child>> out = new java.util.HashMap<>();
        byDir.forEach((d, children) -> out.put(d, List.copyOf(children.values())));
        this.listings = out;
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
        Map<SafetensorsHeader.Tensor, BlobId> hashOf = new java.util.IdentityHashMap<>();
        if (hashes != null) {
            List<SafetensorsHeader.Tensor> byOffset = new java.util.ArrayList<>(header.tensors());
            byOffset.sort(TensorHashes.BY_OFFSET);
            for (int i = 0; i < byOffset.size(); i++) {
                hashOf.put(byOffset.get(i), hashes.get(i));
            }
        }
        NavigableMap<String, FileContent> files = new TreeMap<>();
        TreeSet<String> dirs = new TreeSet<>();
        // One NPY header for the tensors of one dtype and shape (an embedding table's are all alike).
        Map<List<Object>, FileContent.Inline> npyHeaders = new java.util.HashMap<>();
        for (SafetensorsHeader.Tensor t : header.tensors()) {
            Optional<String> descr = NpyHeader.descr(t.dtype());
            String path = t.name() + (descr.isPresent() ? ".npy" : ".bf16");
            // The key's own components: an empty key (or "a/") would be a hidden ".npy" file.
            if (!isPath(t.name()) || !isPath(path) || dirs.contains(path)) {
                continue;
            }
            BlobId hash = hashOf.get(t);
            FileContent data = hash == null ? new FileContent.BlobSlice(shard, dataStart + t.begin(), t.byteSize())
                    : new FileContent.HashedRange(BlobMember.lookup(shard, dataStart + t.begin(), t.byteSize(), hash));
            FileContent content = descr.isPresent()
                    ? FileContent.Pieces.of(npyHeaders.computeIfAbsent(List.of(descr.get(), t.shape()),
                            k -> new FileContent.Inline(NpyHeader.of(descr.get(), t.shape()))), data) : data;
            files.put(path, content);
            for (int slash = path.indexOf('/'); slash >= 0; slash = path.indexOf('/', slash + 1)) {
                dirs.add(path.substring(0, slash));
            }
        }
        // A folder and a file of one name: the folder wins (its tensors are the many).
        files.keySet().removeIf(dirs::contains);
        return new TensorFolder(shard, dataStart, Collections.unmodifiableNavigableMap(files), dirs);
    }

    private static boolean isPath(String path) {
        for (String c : path.split("/", -1)) {
            if (c.isEmpty() || c.equals(".") || c.equals("..") || c.indexOf('\0') >= 0
                    || c.getBytes(StandardCharsets.UTF_8).length > MAX_NAME_BYTES) {
                return false;
            }
        }
        return true;
    }

    /** The file at {@code path}, if there is one. */
    public Optional<FileContent> file(String path) {
        int i = position(path);
        return i < 0 ? Optional.empty() : Optional.of(contents[i]);
    }

    /** The position of the file at {@code path} (0 to {@link #fileCount()} - 1), or -1 if there is none. */
    public int position(String path) {
        int i = java.util.Arrays.binarySearch(paths, path);
        return i < 0 ? -1 : i;
    }

    /** The file at {@code position}. */
    public FileContent file(int position) {
        return contents[position];
    }

    /** The path in the folder of the file at {@code position}. */
    public String path(int position) {
        return paths[position];
    }

    /** Whether {@code path} is a folder ({@code ""}: the root). */
    public boolean isDirectory(String path) {
        return path.isEmpty() || dirs.contains(path);
    }

    /**
     * One entry of a folder: a name, and the file's content and {@link #position} or null and -1
     * for a subfolder.
     */
    public record Child(String name, FileContent file, int position) {
    }

    /** The entries of folder {@code dir}, files and subfolders, sorted by name (empty for no folder). */
    public List<Child> children(String dir) {
        return listings.getOrDefault(dir, List.of());
    }

    /** Subfolders of {@code dir}, for its link count. */
    public long childDirectoryCount(String dir) {
        return children(dir).stream().filter(c -> c.file() == null).count();
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
