package io.warpdata.daemon.cli;

import io.warpdata.blobcache.cache.BlobReader;
import io.warpdata.catalog.Catalog;
import io.warpdata.daemon.inspect.MemberBytes;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

import java.util.concurrent.Callable;

/**
 * {@code warpctl cat DATASET --artifact A --ref PATH}: one artifact member's bytes to stdout,
 * read from the store by ranged reads and verified (every block, then the member's SHA-256).
 */
@Command(name = "cat", description = "Write one artifact member's bytes to stdout (verified; no mount needed).")
final class CatCommand implements Callable<Integer> {
    @ParentCommand
    WarpctlCommand root;

    @Parameters(index = "0", paramLabel = "DATASET", description = "workspace/name[@version]")
    String dataset;

    @Option(names = "--artifact", required = true, paramLabel = "ARTIFACT", description = "The artifact, e.g. images.")
    String artifact;

    @Option(names = "--ref", required = true, paramLabel = "PATH",
            description = "The member's path inside the artifact, e.g. cat/cat_000.png (as a bound column holds it).")
    String ref;

    @Override
    public Integer call() {
        try (Remote remote = root.openRemote()) {
            Catalog.Resolved r = remote.catalog().resolve(WarpctlCommand.datasetRef(dataset));
            try (BlobReader reader = root.context.readers().open(remote.store)) {
                new MemberBytes(reader).copy(r.manifest(), r.id() + "@" + r.version().shortHex(12), artifact, ref,
                        root.context.out());
            }
        }
        return 0;
    }
}
