package local.registry;

import io.apicurio.common.apps.config.DynamicConfigPropertyList;
import java.util.List;
import javax.enterprise.context.ApplicationScoped;
import javax.enterprise.inject.Produces;

/**
 * What the config-index extension's build step would have produced (its deployment jar is not in
 * Maven Central): the list of properties that may be changed at run time through the registry's
 * admin API. Empty: svc sets its registry's configuration at start, never through that API.
 */
@ApplicationScoped
public class NoDynamicProperties {
  @Produces
  @ApplicationScoped
  DynamicConfigPropertyList properties() {
    return new DynamicConfigPropertyList(List.of());
  }
}
