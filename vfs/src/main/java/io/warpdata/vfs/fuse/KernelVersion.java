package io.warpdata.vfs.fuse;

/**
 * The running Linux kernel's version, for FUSE behaviour that depends on it.
 *
 * @param major e.g. 6 for "6.8.0-45-generic"
 * @param minor e.g. 8 for "6.8.0-45-generic"
 */
public record KernelVersion(int major, int minor) {
    public KernelVersion {
        if (major < 0 || minor < 0) {
            throw new IllegalArgumentException("kernel version " + major + "." + minor);
        }
    }

    /** This JVM's kernel ({@code os.version}); 0.0 if it cannot be read, so that every check fails safe. */
    public static KernelVersion running() {
        return parse(System.getProperty("os.version", ""));
    }

    /** {@code "6.18.44-fc-v669"} -> 6.18; anything unreadable -> 0.0. */
    static KernelVersion parse(String text) {
        int[] parts = new int[2];
        int part = 0;
        int digits = 0;
        for (int i = 0; i < text.length() && part < 2; i++) {
            char c = text.charAt(i);
            if (c >= '0' && c <= '9' && digits < 6) {
                parts[part] = parts[part] * 10 + (c - '0');
                digits++;
            } else if (c == '.' && digits > 0) {
                part++;
                digits = 0;
            } else {
                break;
            }
        }
        if (part == 0 || (part == 1 && digits == 0)) {
            return new KernelVersion(0, 0);
        }
        return new KernelVersion(parts[0], parts[1]);
    }

    public boolean atLeast(int wantMajor, int wantMinor) {
        return major > wantMajor || (major == wantMajor && minor >= wantMinor);
    }
}
