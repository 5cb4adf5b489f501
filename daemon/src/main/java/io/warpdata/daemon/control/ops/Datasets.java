package io.warpdata.daemon.control.ops;

import io.warpdata.daemon.control.ControlException;
import io.warpdata.manifest.DatasetRef;
import io.warpdata.manifest.ManifestValidationException;

/** Parsing of the {@code dataset} argument shared by the operations. */
final class Datasets {
    private Datasets() {
    }

    static DatasetRef ref(String text) {
        try {
            return DatasetRef.parse(text);
        } catch (ManifestValidationException e) {
            throw new ControlException(ControlException.BAD_REQUEST, "dataset '" + text + "': " + e.getMessage(),
                    "name a dataset as workspace/name or workspace/name@<8+ hex digits>");
        }
    }
}
