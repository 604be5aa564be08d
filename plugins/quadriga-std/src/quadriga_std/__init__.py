"""quadriga-std: standard targets, datasets, environments, baseline samplers, learners,
estimators and evaluators for quadriga. Importing this package is cheap; each
component's module is imported only when the component is built."""
