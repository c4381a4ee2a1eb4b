package dev.coro.internal;

import dev.coro.LincheckSupport;
import java.util.HashSet;
import java.util.Set;
import org.jetbrains.kotlinx.lincheck.execution.ExecutionScenario;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.Validate;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Lincheck checks {@link KeyTable} for linearizability against {@link Spec}, a sequential map from a
 * key to the node placed for it, in model-checking and stress modes.
 *
 * <p>Six nodes are made up front, two for each of three keys whose hash codes are chosen so that
 * the table grows inside a scenario: it starts with 2 bins; keys A and B share a bin there and part
 * when it grows to 4; key C has A's hash code (unequal, so they share a bin in every table). Any bin
 * that becomes a bucket while the table has fewer than 8 bins grows it, so puts race migrations.
 * {@link #put(int)} answers -1 when it placed the node, else the node it found; {@link #remove(int)}
 * whether it removed that node; {@link #replace(int)} whether it put the other node of that key in
 * its place (as the keyed gate's first joiner puts a shared node in the place of an entry). {@link #validate()} checks after each run that a visit of the table
 * sees each key once and only nodes the specification holds.
 */
@Param(name = "node", gen = IntGen.class, conf = "0:5")
public class KeyTableLincheckTest {
    /** A key with a chosen hash code; equal when the names are. */
    record Key(String name, int hash) {
        @Override
        public int hashCode() {
            return hash;
        }
    }

    /** Hash codes: A and B share bin 1 of 2 and part in 4 (bins 2 and 3); C is A's. */
    static final Key[] KEYS = {new Key("A", 1), new Key("B", 3), new Key("C", 1)};

    static final class Node extends KeyTable.Node<Key> {
        final int id;

        Node(int id) {
            super(KEYS[id / 2]);
            this.id = id;
        }
    }

    private final KeyTable<Node> table = new KeyTable<>(2);
    private final Node[] nodes = new Node[6];

    /** Creates the table and its six nodes (node i has key i / 2). */
    public KeyTableLincheckTest() {
        for (int i = 0; i < nodes.length; i++) {
            nodes[i] = new Node(i);
        }
    }

    /** Places node {@code node} unless its key has one: -1 if placed, else the node found. */
    @Operation
    public int put(@Param(name = "node") int node) {
        Node found = table.putIfAbsent(nodes[node]);
        return found == null ? -1 : found.id;
    }

    /** Removes node {@code node} if it is in the table. */
    @Operation
    public boolean remove(@Param(name = "node") int node) {
        return table.remove(nodes[node]);
    }

    /** Puts the other node of {@code node}'s key in its place if {@code node} is in the table. */
    @Operation
    public boolean replace(@Param(name = "node") int node) {
        return table.replace(nodes[node], nodes[node ^ 1]);
    }

    /** After each run: a visit sees each key at most once, each node at most once. */
    @Validate
    public void validate() {
        Set<Key> keys = new HashSet<>();
        Set<Integer> ids = new HashSet<>();
        table.forEach(n -> {
            if (!keys.add(n.key()) || !ids.add(n.id)) {
                throw new AssertionError("node " + n.id + " (key " + n.key().name() + ") seen twice or its key twice");
            }
        });
        if (table.size() != ids.size()) {
            throw new AssertionError("size " + table.size() + " but " + ids.size() + " nodes visited");
        }
    }

    @Test
    void modelChecking() {
        check().scaledIterations(30).invocations(1000)
                .threads(3).actorsPerThread(3).actorsBefore(2).actorsAfter(2)
                .modelCheck();
    }

    @Test
    @Tag(LincheckSupport.STRESS_MODE)
    void stress() {
        check().scaledIterations(30).invocations(2000)
                .threads(3).actorsPerThread(4).actorsBefore(2).actorsAfter(2)
                .stress();
    }

    private static LincheckSupport.Check check() {
        return LincheckSupport.lincheck(KeyTableLincheckTest.class)
                .spec(Spec.class)
                .scenarios(putsRacingTheMigrationTheyStart(), removeRacingAMigrationOfItsBin(),
                        replaceRacingRemoveAndAMigration());
    }

    /**
     * A and C (one hash code) are placed by two threads while a third places B: whichever put makes
     * the first bucket migrates the table while the others put into bins being moved.
     */
    static ExecutionScenario putsRacingTheMigrationTheyStart() {
        return LincheckSupport.scenario(KeyTableLincheckTest.class,
                null,
                "put 0 | put 4; put 5 | put 2; put 3",
                "put 1; put 3; put 5");
    }

    /** A is in place; B's put grows the table while A's node is removed and placed again. */
    static ExecutionScenario removeRacingAMigrationOfItsBin() {
        return LincheckSupport.scenario(KeyTableLincheckTest.class,
                "put 0",
                "put 2 | remove 0; put 1 | put 4",
                "put 0; put 2; put 4");
    }

    /**
     * A's node is in place; it is replaced by its partner while its placer removes it (the keyed
     * gate's first joiner against the entry's placer leaving) and C's put (A's hash code) makes a
     * bucket of their bin and grows the table around them.
     */
    static ExecutionScenario replaceRacingRemoveAndAMigration() {
        return LincheckSupport.scenario(KeyTableLincheckTest.class,
                "put 0",
                "replace 0; put 1 | remove 0; put 0 | put 4; remove 1",
                "put 0; put 1; put 4");
    }

    /** The sequential specification: the node placed for each key, or none. */
    public static final class Spec {
        private final int[] placed = {-1, -1, -1};

        /** Creates the empty map. */
        public Spec() {}

        /** See {@link KeyTableLincheckTest#put(int)}. */
        public int put(int node) {
            int key = node / 2;
            if (placed[key] >= 0) {
                return placed[key];
            }
            placed[key] = node;
            return -1;
        }

        /** See {@link KeyTableLincheckTest#remove(int)}. */
        public boolean remove(int node) {
            int key = node / 2;
            if (placed[key] != node) {
                return false;
            }
            placed[key] = -1;
            return true;
        }

        /** See {@link KeyTableLincheckTest#replace(int)}. */
        public boolean replace(int node) {
            int key = node / 2;
            if (placed[key] != node) {
                return false;
            }
            placed[key] = node ^ 1;
            return true;
        }
    }
}
