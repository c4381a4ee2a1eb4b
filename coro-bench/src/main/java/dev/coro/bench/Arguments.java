package dev.coro.bench;

import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

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

    /** The help option every plain main has: {@code @Mixin Arguments.Help help;}. */
    static final class Help {
        @Option(names = {"-h", "--help"}, usageHelp = true, description = "print this and exit")
        boolean help;
    }

    /**
     * The implementations to run, named as positional parameters and checked against the ones the
     * measurement has: {@code @Mixin Arguments.Implementations impls = new Arguments.Implementations(IMPLS);}.
     */
    static final class Implementations {
        @Spec(Spec.Target.MIXEE)
        CommandSpec spec;
        private final List<String> known;
        /** The names given, in order; empty: all. */
        List<String> names = new ArrayList<>();

        Implementations(List<String> known) {
            this.known = known;
        }

        @Parameters(paramLabel = "IMPL", description = "implementations to run (default all)")
        void names(List<String> given) {
            for (String name : given) {
                if (!known.contains(name)) {
                    throw new ParameterException(spec.commandLine(),
                            "unknown option or implementation: " + name + " (implementations: " + known + ")");
                }
            }
            names = given;
        }
    }
}
