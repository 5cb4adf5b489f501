package io.warpdata.daemon.control;

import io.warpdata.daemon.control.cli.ControlCommands;
import io.warpdata.manifest.WarpException;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ScopeType;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;

/** A warpctl root like the real one (inherited --json, typed errors as "error:" + "what to do:"), with the control commands. */
@Command(name = "warpctl")
final class TestWarpctl implements Runnable {
    @Option(names = "--json", scope = ScopeType.INHERIT)
    boolean json;

    /** Like DESIGN's {@code warpctl [--socket PATH] <command>}: a root option the subcommands look up. */
    @Option(names = "--socket")
    Path socket;

    @Override
    public void run() {
    }

    record Result(int exit, String out, String err) {
    }

    static Result run(Map<String, String> env, Path cwd, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        ByteArrayOutputStream bar = new ByteArrayOutputStream();
        CommandLine cl = new CommandLine(new TestWarpctl());
        for (Object sub : ControlCommands.all(env, new PrintStream(bar, true, StandardCharsets.UTF_8), cwd)) {
            cl.addSubcommand(sub);
        }
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        cl.setExecutionExceptionHandler((ex, cmd, parse) -> {
            if (ex instanceof WarpException w) {
                cmd.getErr().println("error: " + w.getMessage());
                cmd.getErr().println("  what to do: " + w.nextStep());
                return 1;
            }
            throw ex;
        });
        int code = cl.execute(args);
        return new Result(code, out.toString(), err + bar.toString(StandardCharsets.UTF_8));
    }
}
