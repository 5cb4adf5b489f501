package io.warpdata.daemon;

import io.warpdata.daemon.cli.WarpctlCommand;
import io.warpdata.daemon.warpd.WarpdCommand;
import picocli.AutoComplete;
import picocli.CommandLine;
import picocli.codegen.docgen.manpage.ManPageGenerator;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * Shell completion and man pages for warpd and warpctl, generated from their picocli command
 * definitions (the same objects that parse the command line, so they cannot drift apart):
 * <pre>
 *   java -cp warp.jar io.warpdata.daemon.CommandDocs OUTDIR
 *     OUTDIR/completion/warpctl, OUTDIR/completion/warpd   bash completion (picocli's AutoComplete)
 *     OUTDIR/completion/warp.zsh                           zsh: the same, through bashcompinit
 *     OUTDIR/man/warpctl.adoc, warpctl-status.adoc, ...    man pages as asciidoc (picocli-codegen's
 *                                                          ManPageGenerator; asciidoctor -b manpage makes roff)
 * </pre>
 * scripts/install runs it and installs the results.
 */
public final class CommandDocs {
    private CommandDocs() {
    }

    /** Writes completion scripts and man page sources under {@code args[0]}; exit code 2 on a usage error. */
    public static void main(String[] args) {
        if (args.length != 1) {
            System.err.println("usage: java -cp warp.jar io.warpdata.daemon.CommandDocs OUTDIR");
            System.exit(2);
        }
        List<Path> written = write(Path.of(args[0]));
        written.forEach(p -> System.out.println(p));
    }

    /** The programs, by name: each one's command line. */
    static Map<String, CommandLine> programs() {
        return Map.of("warpctl", WarpctlCommand.commandLine(), "warpd", WarpdCommand.commandLine());
    }

    /**
     * Writes {@code out/completion/{warpctl,warpd,warp.zsh}} and {@code out/man/*.adoc}.
     *
     * @return the files written
     * @throws UncheckedIOException if {@code out} cannot be written
     */
    public static List<Path> write(Path out) {
        try {
            Path completion = Files.createDirectories(out.resolve("completion"));
            Path man = Files.createDirectories(out.resolve("man"));
            StringBuilder zsh = new StringBuilder("""
                    # zsh completion for warpd and warpctl: picocli's bash completion through zsh's
                    # bashcompinit (the scripts switch it on themselves). Add to ~/.zshrc:
                    #   source /usr/local/share/warp/warp.zsh
                    """);
            for (Map.Entry<String, CommandLine> p : new java.util.TreeMap<>(programs()).entrySet()) {
                String script = AutoComplete.bash(p.getKey(), p.getValue());
                Files.writeString(completion.resolve(p.getKey()), script, StandardCharsets.UTF_8);
                zsh.append('\n').append(script);
                ManPageGenerator.generateManPage(man.toFile(), null, new boolean[0], false,
                        p.getValue().getCommandSpec());
            }
            Files.writeString(completion.resolve("warp.zsh"), zsh, StandardCharsets.UTF_8);
            try (var files = Files.walk(out)) {
                return files.filter(Files::isRegularFile).sorted().toList();
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write completion scripts and man pages under " + out, e);
        }
    }
}
