package io.warpdata.daemon.control;

import io.warpdata.daemon.cli.LoaderGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Property tests of the generated loader's sharding (issue 14, seed 000 E2), run by Debian's
 * python3 (and torch, for DataLoader workers) on the loader {@code warpctl init} writes: for
 * world sizes 1 to 16 and many tables (more files than ranks, fewer, empty files, one huge file)
 * no row goes to two ranks and every row to one; whole files per rank when that splits evenly;
 * and DataLoader workers inside each rank read each of its rows exactly once.
 */
class LoaderShardingIT {
    private static final String PROPERTIES = """
            import importlib.util, random, sys
            spec = importlib.util.spec_from_file_location("loader", sys.argv[1])
            loader = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(loader)

            rng = random.Random(14)
            tables = [[0], [1], [7], [5, 0, 5], [1000], [10] * 3, [10] * 16, [10] * 40, [3, 900, 4, 4],
                      [100, 100, 100, 1], [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9]]
            tables += [[rng.randint(0, 200) for _ in range(rng.randint(1, 40))] for _ in range(100)]
            checked = whole = 0
            for file_rows in tables:
                total = sum(file_rows)
                bounds = set()
                acc = 0
                for n in file_rows:
                    acc += n
                    bounds.add(acc)
                for world in range(1, 17):
                    owner = [None] * total
                    for rank in range(world):
                        start, end, how = loader.split_rows(file_rows, rank, world)
                        assert 0 <= start <= end <= total, (file_rows, world, rank, start, end)
                        for row in range(start, end):
                            assert owner[row] is None, ("row read twice", file_rows, world, row, owner[row], rank)
                            owner[row] = rank
                        if how == "whole files":
                            assert start in bounds | {0} and end in bounds, ("not whole files", file_rows, world, rank)
                            whole += 1
                    assert None not in owner, ("row read by no rank", file_rows, world)
                    checked += 1
            assert whole > 0
            print("split properties hold:", checked, "tables x world sizes,", whole, "rank splits by whole files")

            # DataLoader workers inside each rank: every row exactly once over all ranks and workers.
            rows = [{"id": i} for i in range(997)]
            file_rows = [100] * 9 + [97]
            loader.load_rows = lambda: (rows, "test rows", file_rows)
            for world in (1, 2, 3, 4, 5, 8, 16):
                seen = []
                for rank in range(world):
                    dl = loader.make_loader(batch_size=7, num_workers=3, rank=rank, world_size=world)
                    for batch in dl:
                        seen.extend(int(i) for i in batch["id"])
                assert sorted(seen) == list(range(len(rows))), ("workers", world, len(seen), len(set(seen)))
            print("workers hold: every row once for world sizes 1, 2, 3, 4, 5, 8, 16 with 3 workers each")
            """;

    @Test
    void everyRowGoesToExactlyOneRankAndOneWorkerForWorldSizesOneToSixteen(@TempDir Path dir) throws Exception {
        LoaderGenerator.Target target = new LoaderGenerator.Target("ws/name", "ab".repeat(32), Path.of("/warp"),
                Optional.of("main"), List.of("part-0.parquet"), List.of("id"), 997, Map.of(), Optional.empty());
        Path loaderFile = dir.resolve("warp_loader.py");
        Files.writeString(loaderFile, LoaderGenerator.generate(target));
        Path test = dir.resolve("properties.py");
        Files.writeString(test, PROPERTIES);
        Process p = new ProcessBuilder("/usr/bin/python3", test.toString(), loaderFile.toString())
                .redirectErrorStream(true).start();
        try {
            assertThat(p.waitFor(300, TimeUnit.SECONDS)).as("python finished").isTrue();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(p.exitValue()).as(out).isZero();
            assertThat(out).contains("split properties hold: " + 16 * 111 + " tables x world sizes", "workers hold");
        } finally {
            p.destroyForcibly();
        }
    }
}
