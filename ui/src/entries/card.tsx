import { InAirflow } from "../host";
import { DashboardCard } from "../views/DashboardCard";

/** react_apps "Rewind storage" (destination dashboard). */
const RewindCardPlugin = () => (
  <InAirflow>
    <DashboardCard />
  </InAirflow>
);

export default RewindCardPlugin;
