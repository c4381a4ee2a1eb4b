package dev.coro.bench;

import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;

/**
 * Reads the options of the plain-main measurements ({@link RateLateness}, {@link Timers},
 * {@link EchoLoopback}, {@link KeyedMemory}, {@link WaiterMemory}) with picocli: each declares its
 * options as an annotated settings class, this parses them the same way for all.
 *
 * <p>An option given twice takes its last value. {@code -h} or {@code --help} prints the usage.
 * A bad argument (unknown option, missing or malformed value, unknown implementation) prints why and
 * the usage on standard error and exits with status 2.
 */
final class Arguments {
    private Arguments() {}

    /**
     * Fills {@code settings} from {@code args}.
     *
     * @param settings an instance of a class annotated with picocli's {@code @Command}, holding the defaults
     * @param args the main's arguments
     * @return false if the usage was asked for and printed (the main should return), true otherwise
     */
    static boolean parse(Object settings, String[] args) {
        CommandLine command = new CommandLine(settings).setOverwrittenOptionsAllowed(true);
        try {
            command.parseArgs(args);
        } catch (ParameterException e) {
            System.err.println(e.getMessage());
            command.usage(System.err);
            System.exit(2);
        }
        if (command.isUsageHelpRequested()) {
            command.usage(System.out);
            return false;
        }
        return true;
    }

    /**
     * Checks implementation names given on the command line.
     *
     * @param spec the command's spec (picocli injects it into a {@code @Spec} field)
     * @param names the names given
     * @param known the implementations the measurement has
     * @return {@code names}
     * @throws ParameterException if a name is not one of {@code known}
     */
    static List<String> implementations(CommandSpec spec, List<String> names, List<String> known) {
        for (String name : names) {
            if (!known.contains(name)) {
                throw new ParameterException(spec.commandLine(),
                        "unknown option or implementation: " + name + " (implementations: " + known + ")");
            }
        }
        return names;
    }
}
