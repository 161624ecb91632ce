// Running a test's servers in containers (--deploy docker): the engine, the
// images, the deployment, and the removal of what dead runs left.
export { findEngine, listContainers, NoEngine, type Engine } from "./engine.ts";
export { ensureImage, imageTag } from "./images.ts";
export { dockerDeployment, type DockerDeployment } from "./containers.ts";
export { reapLeftovers, reapedText, labelledBy, removeLabelled, type Reaped, type Labelled } from "./leftovers.ts";
