package io.warpdata.catalog;


import com.code_intelligence.jazzer.junit.FuzzTest;
import io.warpdata.manifest.WarpException;

import java.io.IOException;

/**
 * What the catalog reads back from a store it does not control, or from its own state on a disk
 * anyone may have damaged: pointer objects (latest, tags, branches) and the kept state's
 * listing and pointer files. A pointer is a version or a typed error; a damaged state file is an
 * IOException (the caller deletes it and treats it as unknown); nothing else may escape.
 */
class StoreObjectsFuzzTest {
    private final LastKnownGood known = LastKnownGood.inMemory();

    @FuzzTest
    void pointerObject(byte[] input) {
        try {
            PointerCodec.fromJson(input, "fuzz");
        } catch (WarpException expected) {
            // Refused with a typed error: fine.
        }
    }

    @FuzzTest
    void keptStateFile(byte[] input) {
        for (Class<?> type : new Class<?>[] {LastKnownGood.Listing.class, LastKnownGood.Pointer.class}) {
            try {
                known.parseKnown("datasets/ws/n/latest.json", input, type);
            } catch (IOException damaged) {
                // Deleted and treated as unknown by the caller: fine.
            }
        }
    }
}
