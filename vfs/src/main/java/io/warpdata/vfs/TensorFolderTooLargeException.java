package io.warpdata.vfs;

import io.warpdata.manifest.WarpException;

/**
 * A safetensors file holds more tensors than warpd's heap can list as its {@code F.tensors/}
 * folder (about {@link TensorFolders#BYTES_PER_TENSOR} bytes a tensor, within a share of the
 * heap): refused with what to do, rather than filling the heap until warpd dies (audit 36: six
 * files of 100,000 tensors listed in turn ended in an OutOfMemoryError at the default heap).
 */
public final class TensorFolderTooLargeException extends WarpException {
    public TensorFolderTooLargeException(String name, int tensors, int most, long heapBytes) {
        super(name + " holds " + tensors + " tensors; warpd lists at most " + most + " as one .tensors/ folder with its"
                        + " heap of " + (heapBytes >> 20) + " MiB", nextStep((long) tensors * TensorFolders.BYTES_PER_TENSOR));
    }

    /** A header too long to read and parse at all within the folders' share of the heap. */
    public TensorFolderTooLargeException(String name, long headerBytes, long heapBytes) {
        super(name + " has a header of " + headerBytes + " bytes, more than warpd reads as one .tensors/ folder with its"
                        + " heap of " + (heapBytes >> 20) + " MiB",
                // A short key is about 66 bytes of JSON and 900 of folder: sized for that, the densest.
                nextStep(headerBytes * TensorFolders.BYTES_PER_TENSOR / 60));
    }

    /** What to do, for a folder that would take about {@code folderBytes} of heap. */
    private static String nextStep(long folderBytes) {
        return "Read its tensors from the .safetensors file itself (numpy.memmap, torch.from_file, safetensors'"
                + " safe_open: no listing needed), or give warpd a larger heap (WARP_HEAP, at least "
                + ((folderBytes * 10 / 3 >> 20) + 384) + "m for this file) and restart it.";
    }

    @Override
    public String type() {
        return "TensorFolderTooLarge";
    }
}
