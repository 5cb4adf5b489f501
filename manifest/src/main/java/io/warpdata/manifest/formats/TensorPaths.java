package io.warpdata.manifest.formats;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The files a safetensors file's tensors become in the mount's {@code F.tensors/} folder: each
 * tensor of a dtype NumPy knows is {@code KEY.npy}, a BF16 one {@code KEY.bf16}, and a key with
 * '/' becomes folders. A key that cannot be a path (an empty, {@code .} or {@code ..} component,
 * a NUL, a component over 255 bytes) is left out, and so is a file whose path is also a folder
 * of other keys ({@code conf} and {@code conf.npy/g}: the folder wins, its tensors are the many).
 * The mount lists by this rule, and publish counts what it leaves out by the same rule.
 */
public final class TensorPaths {
    /** Longest file name the kernel accepts. */
    private static final int MAX_NAME_BYTES = 255;
    /**
     * Heap a header byte may cost while warpd makes its folder: read, parsed and sorted (a tensor
     * of a short key is about 66 bytes of JSON). warpd reads a header only when this much fits
     * 3/10 of its heap, and publish says so of a file whose header would not fit the default heap.
     */
    public static final int HEAP_PER_HEADER_BYTE = 8;
    /** warpd's default heap (WARP_HEAP), in MiB. */
    public static final int DEFAULT_HEAP_MIB = 384;

    /**
     * The heap, in MiB, warpd needs to list a folder whose making takes {@code folderBytes}: of
     * which that is 3/10, rounded up to 64 MiB (audit 41: a whole default heap was added on top,
     * so "at least 768m" was said of a header that lists at 448m).
     */
    public static long heapMibFor(long folderBytes) {
        long mib = (folderBytes * 10 / 3 + (1 << 20) - 1) >> 20;
        return Math.max(DEFAULT_HEAP_MIB, (mib + 63) / 64 * 64);
    }

    /** Whether warpd's default heap reads a header of {@code headerBytes} to list its folder. */
    public static boolean listsAtDefaultHeap(long headerBytes) {
        return headerBytes * HEAP_PER_HEADER_BYTE <= ((long) DEFAULT_HEAP_MIB << 20) / 10 * 3;
    }

    private TensorPaths() {
    }

    /**
     * What a file's tensors become: its files by path ("a/b.npy"), sorted, and the folders below
     * the root ("a", "a/b"), sorted.
     */
    public record Layout(TreeMap<String, SafetensorsHeader.Tensor> files, TreeSet<String> folders) {
    }

    /** The layout of {@code tensors}; left out of its files: tensors that cannot be files. */
    public static Layout of(List<SafetensorsHeader.Tensor> tensors) {
        TreeMap<String, SafetensorsHeader.Tensor> files = new TreeMap<>();
        TreeSet<String> dirs = new TreeSet<>();
        for (SafetensorsHeader.Tensor t : tensors) {
            String path = path(t);
            // The key's own components: an empty key (or "a/") would be a hidden ".npy" file.
            if (!isPath(t.name()) || !isPath(path) || dirs.contains(path)) {
                continue;
            }
            files.put(path, t);
            for (int slash = path.indexOf('/'); slash >= 0; slash = path.indexOf('/', slash + 1)) {
                dirs.add(path.substring(0, slash));
            }
        }
        // A file left out for a folder of its name leaves that folder's parents: they are the
        // parents of the folder's own files too.
        files.keySet().removeIf(dirs::contains);
        return new Layout(files, dirs);
    }

    /** The file a tensor would be: its key and {@code .npy}, or {@code .bf16} for a dtype NumPy has no type for. */
    public static String path(SafetensorsHeader.Tensor t) {
        return t.name() + (NpyHeader.descr(t.dtype()).isPresent() ? ".npy" : ".bf16");
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
}
