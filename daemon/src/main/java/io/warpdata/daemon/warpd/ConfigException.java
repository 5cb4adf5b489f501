package io.warpdata.daemon.warpd;

import io.warpdata.manifest.WarpException;

/** warpd's settings are missing or invalid, or the mount point cannot be used. */
public final class ConfigException extends WarpException {
    public ConfigException(String message, String nextStep) {
        super(message, nextStep);
    }

    @Override
    public String type() {
        return "ConfigError";
    }
}
