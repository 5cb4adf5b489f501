package io.warpdata.daemon.publish;

import io.warpdata.catalog.Catalog;
import io.warpdata.store.PointerMovedException;
import io.warpdata.manifest.DatasetId;
import io.warpdata.manifest.VersionHash;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The pointers a publish (or a view) moves to the version it makes: latest (the default branch)
 * and/or one named branch. Their heads are read when the work begins and each is moved by
 * compare-and-swap from that head when it ends, so of two publishers that started from the same
 * head exactly one moves it; the other gets {@link PointerMovedException} (its version is
 * published all the same, and the message says so).
 */
public final class PointerMoves {
    private final Catalog catalog;
    private final DatasetId dataset;
    private final Optional<Catalog.Head> latest;
    private final Optional<String> branch;
    private final Optional<Catalog.Head> branchHead;

    private PointerMoves(Catalog catalog, DatasetId dataset, Optional<Catalog.Head> latest, Optional<String> branch,
                         Optional<Catalog.Head> branchHead) {
        this.catalog = catalog;
        this.dataset = dataset;
        this.latest = latest;
        this.branch = branch;
        this.branchHead = branchHead;
    }

    /**
     * Reads the heads of the pointers to move (one GET each, past every cache).
     *
     * @param moveLatest whether latest moves
     * @param branch     the branch that moves, if any (created when it does not exist)
     * @throws io.warpdata.store.StoreException if the store cannot be read
     */
    public static PointerMoves begin(Catalog catalog, DatasetId dataset, boolean moveLatest, Optional<String> branch) {
        Objects.requireNonNull(branch, "branch");
        // A name that cannot be the branch fails now, before anything is uploaded.
        branch.ifPresent(b -> catalog.requireBranchName(dataset, b));
        return new PointerMoves(catalog, dataset,
                moveLatest ? Optional.of(catalog.head(dataset, null)) : Optional.empty(), branch,
                branch.map(b -> catalog.head(dataset, b)));
    }

    /**
     * Moves the pointers to {@code version}, each from the head read by {@link #begin}; one that
     * already names {@code version} is not rewritten.
     *
     * @param by who moves them (kept in the pointer's envelope)
     * @return what moved, e.g. {@code latest -> 3f9c1a2b4d5e}, {@code branch dev -> 3f9c1a2b4d5e}
     * @throws PointerMovedException if someone else moved one since {@link #begin}
     */
    public List<String> finish(VersionHash version, String by) {
        List<String> moved = new ArrayList<>();
        String moving = "latest";
        try {
            if (latest.isPresent() && catalog.moveBranch(dataset, null, version, by, latest.get())) {
                moved.add("latest -> " + version.shortHex(12));
            }
            if (branch.isPresent()) {
                moving = "branch " + branch.get();
                if (catalog.moveBranch(dataset, branch.get(), version, by, branchHead.orElseThrow())) {
                    moved.add("branch " + branch.get() + " -> " + version.shortHex(12));
                }
            }
        } catch (PointerMovedException e) {
            String point = moving.equals("latest") ? "warpctl latest " + dataset + " " + version.shortHex(16)
                    : "warpctl branch " + dataset + "@" + version.shortHex(16) + " " + branch.orElseThrow();
            throw new PointerMovedException(dataset + " " + moving + " was moved by someone else while this publish ran,"
                    + " so it was left where they put it; version " + version.hex() + " is published all the same"
                    + (moved.isEmpty() ? "" : " (" + String.join(", ", moved) + ")"),
                    "To point " + moving + " at this version after all: " + point + " (or publish again, which finds"
                            + " the version stored and moves " + moving + " from where it is now).", e,
                    java.util.Map.of("version", version.hex()));
        }
        return moved;
    }
}
