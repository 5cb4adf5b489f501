package io.warpdata.daemon.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.warpdata.store.InMemoryBlobStore;
import io.warpdata.daemon.testing.StoreBlobReader;
import io.warpdata.daemon.warpd.WarpdCommand;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import picocli.CommandLine;

/**
 * The conventions every warpctl command keeps, checked on every command (table-driven, the
 * table taken from the command tree itself): {@code --help}, {@code -h} and {@code warpctl help X}
 * print help and exit 0; a bad size or duration is a usage error (exit 2), in JSON under
 * {@code --json}, never an "unexpected failure".
 */
class CliConventionsTest {
    @TempDir
    Path tmp;

    private record Run(int code, String out, String err) {
    }

    private Run warpctl(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        CliContext ctx = new CliContext(Map.of("WARP_REMOTE", "memory://test", "WARP_SOCKET", tmp.resolve("none.sock").toString()),
                new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8), tmp,
                Clock.fixed(Instant.parse("2026-11-25T05:00:00Z"), ZoneOffset.UTC),
                (remote, endpoint) -> new InMemoryBlobStore(), StoreBlobReader::new, false);
        int code = WarpctlCommand.run(args, ctx);
        return new Run(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    /** Every command and subcommand, as the words that name it ({@code [cache, gc]}). */
    static Stream<List<String>> commands() {
        List<List<String>> all = new ArrayList<>();
        collect(WarpctlCommand.commandLine(), new ArrayList<>(), all);
        return all.stream();
    }

    private static void collect(CommandLine cl, List<String> path, List<List<String>> into) {
        cl.getSubcommands().forEach((name, sub) -> {
            if (name.equals("help") || !sub.getCommandName().equals(name)) {
                return;
            }
            List<String> p = new ArrayList<>(path);
            p.add(name);
            into.add(p);
            collect(sub, p, into);
        });
    }

    @Test
    void theTableHasEveryCommand() {
        assertThat(commands().map(c -> String.join(" ", c)))
                .contains("publish", "tag", "view", "info", "inspect", "schema", "head", "stream", "cat", "list-remote",
                        "status", "warm", "cache", "cache gc", "doctor", "refresh", "prefetch");
    }

    @ParameterizedTest(name = "warpctl {0} --help")
    @MethodSource("commands")
    void longHelpPrintsUsageAndExitsZero(List<String> command) {
        assertHelp(command, run(command, "--help"));
    }

    @ParameterizedTest(name = "warpctl {0} -h")
    @MethodSource("commands")
    void shortHelpPrintsUsageAndExitsZero(List<String> command) {
        assertHelp(command, run(command, "-h"));
    }

    @ParameterizedTest(name = "warpctl help {0}")
    @MethodSource("commands")
    void helpCommandPrintsUsageAndExitsZero(List<String> command) {
        List<String> args = new ArrayList<>(List.of("help"));
        args.addAll(command);
        assertHelp(command, warpctl(args.toArray(String[]::new)));
    }

    private Run run(List<String> command, String... more) {
        List<String> args = new ArrayList<>(command);
        args.addAll(List.of(more));
        return warpctl(args.toArray(String[]::new));
    }

    private static void assertHelp(List<String> command, Run r) {
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).startsWith("Usage: warpctl " + String.join(" ", command)).contains("-h, --help");
        assertThat(r.err()).isEmpty();
    }

    /** A bad value for every SIZE and DURATION option: the command line and the option. */
    static Stream<List<String>> badSizes() {
        List<List<String>> rows = new ArrayList<>();
        for (String bad : List.of("lots", "-5", "10%", "5 parsecs")) {
            rows.add(List.of("warm", "demo/pets", "--max-bytes", bad));
            rows.add(List.of("cache", "gc", "--limit", bad));
            rows.add(List.of("doctor", "--cache-size", bad));
            rows.add(List.of("publish", "demo/pets", "--shard-size", bad));
        }
        return rows.stream();
    }

    @ParameterizedTest(name = "warpctl {0}")
    @MethodSource("badSizes")
    void aBadSizeIsAUsageErrorNamingTheOption(List<String> args) {
        Run plain = warpctl(args.toArray(String[]::new));

        assertThat(plain.code()).as(plain.err()).isEqualTo(2);
        assertThat(plain.err()).contains("error: Invalid value for option '" + args.get(args.size() - 2) + "'",
                "'" + args.getLast() + "' is not a size", "what to do:").doesNotContain("unexpected failure", "\tat ");
    }

    @ParameterizedTest(name = "warpctl {0} --json")
    @MethodSource("badSizes")
    void aBadSizeUnderJsonIsOneJsonError(List<String> args) throws Exception {
        List<String> withJson = new ArrayList<>(args);
        withJson.add("--json");

        Run r = warpctl(withJson.toArray(String[]::new));

        assertThat(r.code()).as(r.err()).isEqualTo(2);
        JsonNode error = new ObjectMapper().readTree(r.err()).path("error");
        assertThat(error.path("type").asText()).isEqualTo("Usage");
        assertThat(error.path("message").asText()).contains(args.get(args.size() - 2), "is not a size");
        assertThat(error.path("next_step").asText()).contains("--help");
        assertThat(r.out()).isEmpty();
    }

    @Test
    void everySizeAndDurationOptionIsInTheTable() {
        Set<String> options = new TreeSet<>();
        sizeAndDurationOptions(WarpctlCommand.commandLine(), "warpctl", options);
        Set<String> covered = new TreeSet<>();
        badSizes().forEach(row -> {
            List<String> words = row.stream().takeWhile(w -> !w.startsWith("-") && !w.contains("/")).toList();
            covered.add(String.join(" ", Stream.concat(Stream.of("warpctl"), words.stream()).toList()) + " " + row.get(row.size() - 2));
        });
        badWarpdValues().forEach(row -> covered.add("warpd " + row.get(0)));

        sizeAndDurationOptions(WarpdCommand.commandLine(), "warpd", options);

        assertThat(covered).containsAll(options);
    }

    private static void sizeAndDurationOptions(CommandLine cl, String name, Set<String> into) {
        for (CommandLine.Model.OptionSpec o : cl.getCommandSpec().options()) {
            if (Set.of("SIZE", "DURATION").contains(o.paramLabel())) {
                into.add(name + " " + o.longestName());
            }
        }
        cl.getSubcommands().forEach((sub, c) -> {
            if (!sub.equals("help")) {
                sizeAndDurationOptions(c, name + " " + sub, into);
            }
        });
    }

    static Stream<List<String>> badWarpdValues() {
        return Stream.of(List.of("--cache-size", "lots"), List.of("--cache-size", "-5"), List.of("--cache-size", "10%"),
                List.of("--cache-size", "0"), List.of("--pointer-ttl", "soon"), List.of("--pointer-ttl", "-5s"),
                List.of("--pointer-ttl", "0s"), List.of("--pointer-ttl", "3 days"), List.of("--mirror-timeout", "soon"),
                List.of("--mirror-timeout", "-5s"));
    }

    @ParameterizedTest(name = "warpd {0}")
    @MethodSource("badWarpdValues")
    void warpdRefusesABadSizeOrDurationAsAUsageErrorBeforeStarting(List<String> option) {
        StringWriter err = new StringWriter();
        CommandLine cl = WarpdCommand.commandLine();
        cl.setErr(new PrintWriter(err, true));
        cl.setOut(new PrintWriter(new StringWriter(), true));

        int code = cl.execute("--mount", tmp.resolve("mnt").toString(), "--remote", "file://" + tmp, option.get(0), option.get(1));

        assertThat(code).as(err.toString()).isEqualTo(2);
        assertThat(err.toString()).contains("Invalid value for option '" + option.get(0) + "'", option.get(1));
    }
}
