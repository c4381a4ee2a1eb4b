package dev.coro;

import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.EvaluationResult;
import com.tngtech.archunit.library.Architectures.LayeredArchitecture;
import dev.coro.cancel.CancellationToken;
import dev.coro.internal.TokenSignals;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * DESIGN.md's layer table as a rule over coro-core's production classes: bottom up, internal,
 * cancellation, scheduling, task, synchronization, gates, channels, I/O; a layer may use only the
 * layers below it. A wrong import fails this test, and so the build.
 *
 * <p>Only dependencies between classes of the layers count (the JDK is everywhere). The channels
 * layer is optional: it may not exist yet. Every other layer must have classes, so a classpath on
 * which the import finds nothing fails instead of passing vacuously. {@code module-info.class} sits
 * outside {@code dev.coro} and ArchUnit skips it anyway.
 */
class LayersTest {

    /** Bottom up; each layer may use only the ones before it in this list. */
    private static final List<String[]> LAYERS = List.of(
            new String[] {"internal", "dev.coro.internal.."},
            new String[] {"cancellation", "dev.coro.cancel.."},
            new String[] {"scheduling", "dev.coro.scheduler.."},
            new String[] {"task", "dev.coro.task.."},
            new String[] {"synchronization", "dev.coro.sync.."},
            new String[] {"gates", "dev.coro.gate.."},
            new String[] {"channels", "dev.coro.channel.."},
            new String[] {"io", "dev.coro.io.."});

    private static final String OPTIONAL = "channels";

    static LayeredArchitecture layers() {
        LayeredArchitecture rule = layeredArchitecture().consideringOnlyDependenciesInLayers();
        for (String[] layer : LAYERS) {
            rule = layer[0].equals(OPTIONAL)
                    ? rule.optionalLayer(layer[0]).definedBy(layer[1])
                    : rule.layer(layer[0]).definedBy(layer[1]);
        }
        for (int i = 0; i < LAYERS.size(); i++) {
            String[] below = LAYERS.subList(0, i).stream().map(l -> l[0]).toArray(String[]::new);
            String name = LAYERS.get(i)[0];
            rule = below.length == 0
                    ? rule.whereLayer(name).mayNotAccessAnyLayer()
                    : rule.whereLayer(name).mayOnlyAccessLayers(below);
        }
        // The one documented back edge (DESIGN.md, cancellation row): TokenSignals hands a token's
        // callback list to the task layer, so that a suspended task links its own node there (one
        // object per suspension instead of a step plus a registration). Only this class to only
        // this class; any other use of cancel from internal still fails.
        return rule.ignoreDependency(TokenSignals.class, CancellationToken.class);
    }

    @Test
    void eachLayerUsesOnlyTheLayersBelowIt() {
        JavaClasses production = new ClassFileImporter()
                .withImportOption(new ImportOption.DoNotIncludeTests())
                .importPackages("dev.coro");
        layers().check(production);
    }

    /**
     * The rule bites: {@link dev.coro.internal.LayerBreach} (a test class posing as production code)
     * reaches from internal up to I/O and, outside the one allowed edge, to cancellation.
     */
    @Test
    void aLowerLayerReachingUpIsReported() {
        ImportOption production = new ImportOption.DoNotIncludeTests();
        JavaClasses withBreach = new ClassFileImporter()
                .withImportOption(location -> production.includes(location)
                        || location.contains("dev/coro/internal/LayerBreach"))
                .importPackages("dev.coro");
        EvaluationResult result = layers().evaluate(withBreach);
        List<String> details = result.getFailureReport().getDetails();
        assertTrue(details.stream().anyMatch(d -> d.contains("LayerBreach") && d.contains("dev.coro.io.EventLoop")),
                "internal -> io is reported: " + details);
        assertTrue(details.stream().anyMatch(d -> d.contains("LayerBreach") && d.contains("CancellationToken")),
                "internal -> cancel is reported for any class but TokenSignals: " + details);
        assertFalse(details.stream().anyMatch(d -> !d.contains("LayerBreach")),
                "only the planted breach is reported: " + details);
    }
}
