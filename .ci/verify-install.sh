#!/bin/sh
# The installed artifacts, used the way a user would: installs the published modules from this tree
# (./coro install, tests skipped), then builds a NEW Maven project in a temporary directory that
# imports dev.coro:coro-bom, depends on coro-core without a version, is a JPMS module
# (requires dev.coro), compiles against the installed jar, runs on the module path and must print
# the expected lines. Run it as ./coro verify-install (the launcher picks the JDK 21+).
#   --no-install   check what is in the local repository now, without installing first
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
install=yes
for a in "$@"; do
  case "$a" in
    --no-install) install=no ;;
    *) echo "verify-install: unknown option '$a' (only --no-install)" >&2; exit 2 ;;
  esac
done

major=$(java -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p')
if [ "${major%%.*}" -lt 21 ]; then
  echo "verify-install: java here is $major; run it as ./coro verify-install, which picks a JDK 21+" >&2
  exit 1
fi

# the parent's version (the first <version> after its artifactId), and the BOM's, which has no parent
version_after() { sed -n "/<artifactId>$2<\/artifactId>/,/<version>/s/.*<version>\(.*\)<\/version>.*/\1/p" "$1" | head -1; }
version=$(version_after "$here/pom.xml" coro-parent)
bom_version=$(version_after "$here/coro-bom/pom.xml" coro-bom)
if [ "$version" != "$bom_version" ]; then
  echo "verify-install: FAILED: coro-bom is at $bom_version but the parent at $version (coro-bom has no parent: move both)" >&2
  exit 1
fi

start=$(date +%s)
if [ $install = yes ]; then
  echo "verify-install: installing the published modules at $version (./coro install, quiet)"
  "$here/coro" install -q -pl '!coro-examples,!coro-bench'
fi
installed=$(date +%s)

work=$(mktemp -d "${TMPDIR:-/tmp}/coro-verify-install.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/src/main/java/proof"

cat > "$work/pom.xml" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0"
         xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
         xsi:schemaLocation="http://maven.apache.org/POM/4.0.0 https://maven.apache.org/xsd/maven-4.0.0.xsd">
  <modelVersion>4.0.0</modelVersion>
  <groupId>example</groupId>
  <artifactId>coro-user</artifactId>
  <version>1</version>
  <properties>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
  </properties>
  <dependencyManagement>
    <dependencies>
      <dependency>
        <groupId>dev.coro</groupId>
        <artifactId>coro-bom</artifactId>
        <version>$version</version>
        <type>pom</type>
        <scope>import</scope>
      </dependency>
    </dependencies>
  </dependencyManagement>
  <dependencies>
    <dependency>
      <groupId>dev.coro</groupId>
      <artifactId>coro-core</artifactId>
    </dependency>
  </dependencies>
  <build>
    <plugins>
      <plugin>
        <groupId>org.apache.maven.plugins</groupId>
        <artifactId>maven-compiler-plugin</artifactId>
        <version>3.14.0</version>
        <configuration><release>21</release></configuration>
      </plugin>
      <plugin>
        <groupId>org.apache.maven.plugins</groupId>
        <artifactId>maven-dependency-plugin</artifactId>
        <version>3.9.0</version>
      </plugin>
    </plugins>
  </build>
</project>
EOF

cat > "$work/src/main/java/module-info.java" <<'EOF'
module proof {
    requires dev.coro;
}
EOF

cat > "$work/src/main/java/proof/FanOut.java" <<'EOF'
package proof;

import dev.coro.gate.CapacityGate;
import dev.coro.scheduler.WorkStealingPool;
import dev.coro.task.Scope;
import dev.coro.task.Task;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/** A fan-out of 100 tasks on a pool of 4, at most 3 of them at once through a capacity gate. */
public final class FanOut {
    public static void main(String[] args) {
        CapacityGate gate = new CapacityGate(3);
        AtomicInteger inside = new AtomicInteger(), most = new AtomicInteger();
        try (WorkStealingPool pool = WorkStealingPool.create(4)) {
            Task<Long> total = Scope.scoped(scope -> {
                List<Task<Long>> squares = new ArrayList<>();
                for (long i = 1; i <= 100; i++) {
                    long n = i;
                    squares.add(scope.spawn(gate.within(Task.fromCallable(() -> {
                        most.accumulateAndGet(inside.incrementAndGet(), Math::max);
                        try { return n * n; } finally { inside.decrementAndGet(); }
                    }))));
                }
                return Task.whenAll(squares).map(s -> s.stream().mapToLong(Long::longValue).sum());
            }).startOn(pool);
            System.out.println("sum of squares 1..100: " + total.join());
        }
        System.out.println("never more than 3 inside: " + (most.get() >= 1 && most.get() <= 3));
        System.out.println("module " + FanOut.class.getModule().getName()
                + " reads " + CapacityGate.class.getModule().getName());
    }
}
EOF

expected="sum of squares 1..100: 338350
never more than 3 inside: true
module proof reads dev.coro"

echo "verify-install: compiling a new project in $work against dev.coro:coro-bom:$version"
mvn -B -ntp -q -f "$work/pom.xml" compile dependency:build-classpath \
  -Dmdep.outputFile="$work/modulepath.txt" -Dmdep.includeScope=runtime
modulepath="$work/target/classes:$(cat "$work/modulepath.txt")"
case "$modulepath" in
  *"/dev/coro/coro-core/$version/coro-core-$version.jar"*) ;;
  *) echo "verify-install: FAILED: coro-core $version is not from the local repository: $modulepath" >&2; exit 1 ;;
esac

echo "verify-install: running proof/proof.FanOut on the module path"
out=$(java --module-path "$modulepath" --module proof/proof.FanOut)
printf '%s\n' "$out" | sed 's/^/  | /'
end=$(date +%s)
if [ "$out" != "$expected" ]; then
  echo "verify-install: FAILED: expected" >&2
  printf '%s\n' "$expected" | sed 's/^/  | /' >&2
  exit 1
fi
echo "verify-install: OK (install $((installed - start)) s, new project $((end - installed)) s)"
