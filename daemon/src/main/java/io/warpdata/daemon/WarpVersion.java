package io.warpdata.daemon;

import picocli.CommandLine.IVersionProvider;

/**
 * Which build of Warp this is: the release and the commit it was built from, e.g.
 * {@code 0.1.0+afd5cb6b1e2f} (the jar's {@code Implementation-Version}; the commit is what
 * {@code scripts/*} pass Maven as {@code warp.commit}, {@code unknown} for a build outside a git
 * work tree). Two builds of one release are told apart by it after an upgrade (README, "Upgrading").
 */
public final class WarpVersion {
    /** The release, when the jar's manifest does not say (classes run from a build tree). */
    static final String RELEASE = "0.1.0";

    private WarpVersion() {
    }

    /** The release and commit, e.g. {@code 0.1.0+afd5cb6b1e2f}. */
    public static String version() {
        String v = WarpVersion.class.getPackage().getImplementationVersion();
        return v == null || v.isBlank() ? RELEASE + "+unknown" : v;
    }

    /** {@code warpd --version}. */
    public static final class Warpd implements IVersionProvider {
        @Override
        public String[] getVersion() {
            return new String[] {"warpd " + version()};
        }
    }

    /** {@code warpctl --version}. */
    public static final class Warpctl implements IVersionProvider {
        @Override
        public String[] getVersion() {
            return new String[] {"warpctl " + version()};
        }
    }
}
