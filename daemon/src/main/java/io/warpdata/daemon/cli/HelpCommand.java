package io.warpdata.daemon.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import java.util.ArrayList;
import java.util.List;

/**
 * {@code warpctl help [COMMAND [SUBCOMMAND]...]}: the same help as {@code warpctl COMMAND --help},
 * at any depth ({@code warpctl help cache gc}); picocli's own help command stops at one level.
 */
@Command(name = "help", helpCommand = true, description = "Show the help of a command: warpctl help COMMAND [SUBCOMMAND].")
final class HelpCommand implements Runnable {
    @Spec
    CommandSpec spec;

    @Parameters(paramLabel = "COMMAND", arity = "0..*", description = "The command (and subcommand) to describe.")
    List<String> words = new ArrayList<>();

    @Override
    public void run() {
        CommandLine target = spec.parent().commandLine();
        for (String word : words) {
            CommandLine next = target.getSubcommands().get(word);
            if (next == null) {
                throw new CommandLine.ParameterException(spec.commandLine(), "'" + word + "' is not a command of "
                        + target.getCommandSpec().qualifiedName() + "; its commands are "
                        + String.join(", ", target.getSubcommands().keySet()));
            }
            target = next;
        }
        target.usage(spec.commandLine().getOut());
        spec.commandLine().getOut().flush();
    }
}
