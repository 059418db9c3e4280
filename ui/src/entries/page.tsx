import { InAirflow } from "../host";
import { RewindPage } from "../views/RewindPage";

/** react_apps "Rewind" (destination nav). */
const RewindPagePlugin = () => (
  <InAirflow>
    <RewindPage />
  </InAirflow>
);

export default RewindPagePlugin;
