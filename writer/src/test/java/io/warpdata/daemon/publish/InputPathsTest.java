package io.warpdata.daemon.publish;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** What publish makes of the paths and globs it is given. */
class InputPathsTest {
    @TempDir
    Path dir;

    @Test
    void aPathThatIsThereAndAGlobAreExpanded() throws IOException {
        Files.writeString(dir.resolve("a.parquet"), "x");
        Files.writeString(dir.resolve("b.parquet"), "y");
        assertThat(InputPaths.expand("a.parquet", dir, "--table main")).containsExactly(dir.resolve("a.parquet"));
        assertThat(InputPaths.expand("*.parquet", dir, "--table main"))
                .containsExactly(dir.resolve("a.parquet"), dir.resolve("b.parquet"));
    }

    /** audit 32: '*.tar' took .hidden.tar, which the shell's glob leaves out. */
    @Test
    void aGlobLeavesOutDotFilesAsTheShellDoesUnlessItSpellsTheDot() throws IOException {
        Files.writeString(dir.resolve("a.tar"), "x");
        Files.writeString(dir.resolve(".hidden.tar"), "y");
        Files.createDirectories(dir.resolve(".git/x"));
        Files.writeString(dir.resolve(".git/x/b.tar"), "z");
        assertThat(InputPaths.expand("*.tar", dir, "--artifact s")).containsExactly(dir.resolve("a.tar"));
        assertThat(InputPaths.expand("**.tar", dir, "--artifact s")).containsExactly(dir.resolve("a.tar"));
        assertThat(InputPaths.expand(".*.tar", dir, "--artifact s")).containsExactly(dir.resolve(".hidden.tar"));
        // audit 33: a glob that matched dot files only said "matches nothing".
        Files.delete(dir.resolve("a.tar"));
        assertThatThrownBy(() -> InputPaths.expand("*.tar", dir, "--artifact s"))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("matches nothing but 1 name(s) starting with '.'")
                .satisfies(e -> assertThat(((InvalidInputException) e).nextStep()).contains("'.*.tar'"));
    }

    /** Session 27's review: one dot anywhere in a pattern took dot names in all its components. */
    @Test
    void theDotRuleHoldsForEachComponentOfThePattern() throws IOException {
        for (String f : List.of("a/.cache/x.tar", "a/.cache/.y.tar", ".git/.cache/z.tar", "b/.cache/.w.tar")) {
            Files.createDirectories(dir.resolve(f).getParent());
            Files.writeString(dir.resolve(f), f);
        }
        assertThat(InputPaths.expand("*/.cache/*.tar", dir, "--artifact s")).containsExactly(dir.resolve("a/.cache/x.tar"));
        assertThat(InputPaths.expand("*/.cache/.*.tar", dir, "--artifact s"))
                .containsExactly(dir.resolve("a/.cache/.y.tar"), dir.resolve("b/.cache/.w.tar"));
        assertThat(InputPaths.expand(".*/.cache/*.tar", dir, "--artifact s")).containsExactly(dir.resolve(".git/.cache/z.tar"));
    }

    @Test
    void aQuotedTildeIsNamedAsNotExpanded() {
        // audit 27: --artifact 'files=~/nonexist' said only "does not exist".
        assertThatThrownBy(() -> InputPaths.expand("~/nonexist", dir, "--artifact files"))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("~/nonexist of --artifact files does not exist")
                .satisfies(e -> assertThat(((InvalidInputException) e).nextStep())
                        .contains("A ~ inside quotes is not expanded", "$HOME/"));
        assertThatThrownBy(() -> InputPaths.expand("nonexist", dir, "--artifact files"))
                .isInstanceOf(InvalidInputException.class)
                .satisfies(e -> assertThat(((InvalidInputException) e).nextStep())
                        .startsWith("Check the path").doesNotContain("~"));
    }

    /**
     * Audit 45: a folder given as a 'latest' link was read through the link by each step of the
     * publish, so a link moved meanwhile mixed two outputs into one version. It is resolved once;
     * a file keeps the name it is given (a tar's name is recorded).
     */
    @Test
    void aFolderGivenAsALinkIsTheFolderItLeadsToAndABrokenOrLoopingLinkIsNamed() throws IOException {
        Path d1 = Files.createDirectories(dir.resolve("2026-11-30"));
        Path latest = Files.createSymbolicLink(dir.resolve("latest"), Path.of("2026-11-30"));
        assertThat(InputPaths.expand("latest", dir, "--table t")).containsExactly(d1.toRealPath());
        assertThat(InputPaths.expand("lat*", dir, "--table t")).containsExactly(d1.toRealPath());
        Files.writeString(d1.resolve("a.tar"), "x");
        Path file = Files.createSymbolicLink(dir.resolve("shard-0.tar"), d1.resolve("a.tar"));
        assertThat(InputPaths.expand("shard-0.tar", dir, "--artifact x")).containsExactly(file);
        // The review: a file or a glob through a folder link was read through the link each time.
        assertThat(InputPaths.expand("latest/a.tar", dir, "--artifact x")).containsExactly(d1.toRealPath().resolve("a.tar"));
        assertThat(InputPaths.expand("latest/*.tar", dir, "--artifact x")).containsExactly(d1.toRealPath().resolve("a.tar"));

        Files.createSymbolicLink(dir.resolve("gone"), Path.of("nowhere"));
        assertThatThrownBy(() -> InputPaths.expand("gone", dir, "--table t")).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("Input gone of --table t is a broken symlink (to nowhere, which does not exist)");
        Files.createSymbolicLink(dir.resolve("loopa"), Path.of("loopb"));
        Files.createSymbolicLink(dir.resolve("loopb"), Path.of("loopa"));
        assertThatThrownBy(() -> InputPaths.expand("loopa", dir, "--table t")).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("Input loopa of --table t is a symlink loop (it leads back to itself through loopb)");
        assertThat(latest).isSymbolicLink();
    }
}
