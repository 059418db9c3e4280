import { InAirflow } from "../host";
import { RunTab, type RunTabProps } from "../views/RunTab";

/** react_apps "Rewind lifecycle" (destination dag_run): Airflow passes dagId and runId. */
const RewindRunPlugin = (props: RunTabProps) => (
  <InAirflow>
    <RunTab {...props} />
  </InAirflow>
);

export default RewindRunPlugin;
