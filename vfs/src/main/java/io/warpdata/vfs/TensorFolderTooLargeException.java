package io.warpdata.vfs;

import io.warpdata.manifest.WarpException;

/**
 * A safetensors file holds more tensors than warpd's heap can list as its {@code F.tensors/}
 * folder (about {@link TensorFolders#BYTES_PER_TENSOR} bytes a tensor and its path, within a
 * share of the heap), or a header too long to read within it: refused with what to do, rather
 * than filling the heap until warpd dies (audit 36: six files of 100,000 tensors listed in turn
 * ended in an OutOfMemoryError at the default heap).
 */
public final class TensorFolderTooLargeException extends WarpException {
    /** A folder that might not fit the folders' budget alone. */
    public TensorFolderTooLargeException(String name, int tensors, long folderBytes, long budgetBytes, long heapBytes) {
        super(name + " holds " + tensors + " tensors, a .tensors/ folder of up to " + (folderBytes >> 20) + " MiB; warpd"
                        + " keeps its tensor folders within " + (budgetBytes >> 20) + " MiB of its heap of "
                        + (heapBytes >> 20) + " MiB", nextStep(folderBytes));
    }

    /** A header too long to read and parse at all within the folders' share of the heap. */
    public TensorFolderTooLargeException(String name, long headerBytes, long heapBytes) {
        super(name + " has a header of " + headerBytes + " bytes, more than warpd reads as one .tensors/ folder with its"
                        + " heap of " + (heapBytes >> 20) + " MiB",
                nextStep(headerBytes * TensorFolders.HEAP_PER_HEADER_BYTE));
    }

    /** What to do, for a folder that needs about {@code folderBytes} of heap. */
    private static String nextStep(long folderBytes) {
        return "Read its tensors from the .safetensors file itself (numpy.memmap, torch.from_file with shared=False,"
                + " safetensors'"
                + " safe_open: no listing needed), or give warpd a larger heap (WARP_HEAP, at least "
                + io.warpdata.manifest.formats.TensorPaths.heapMibFor(folderBytes) + "m for this file) and restart it.";
    }

    @Override
    public String type() {
        return "TensorFolderTooLarge";
    }
}
