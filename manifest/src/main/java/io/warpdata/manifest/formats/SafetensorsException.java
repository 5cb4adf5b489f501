package io.warpdata.manifest.formats;

import io.warpdata.manifest.WarpException;

/**
 * A safetensors file that breaks the format: names the file and, where there is one, the
 * tensor. Publish refuses such a file before anything is uploaded.
 */
public final class SafetensorsException extends WarpException {
    private final String file;
    private final String tensor;

    /**
     * @param tensor the tensor at fault, or null for the file as a whole
     */
    public SafetensorsException(String file, String tensor, String problem) {
        this(file, tensor, problem, "Rewrite the file with a safetensors writer (safetensors.numpy.save_file, torch's"
                + " save_file), or leave it out of the artifact.");
    }

    /** As above, with what to do when rewriting the file would not help (a dtype Warp does not know). */
    public SafetensorsException(String file, String tensor, String problem, String nextStep) {
        super("Safetensors file " + file + (tensor == null ? "" : ": tensor '" + tensor + "'") + " " + problem, nextStep);
        this.file = file;
        this.tensor = tensor;
    }

    /** The file at fault. */
    public String file() {
        return file;
    }

    /** The tensor at fault, or null. */
    public String tensor() {
        return tensor;
    }

    @Override
    public String type() {
        return "InvalidSafetensors";
    }
}
