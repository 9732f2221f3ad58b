/* `sandrun features`: the features document of runtime-spec features.md
 * and features-linux.md, saying what this runtime implements (not what the
 * host has).  Every list comes from the table the corresponding parser
 * uses, so the document cannot claim what the code refuses:
 *   hooks            the six kinds create/start run;
 *   mountOptions     mountopt.c's table, minus the options it refuses;
 *   linux.namespaces namespaces.c; linux.capabilities capabilities.c;
 *   linux.seccomp    seccomp_compile.c (archs: the spec's names this
 *                    libseccomp can use; supportedFlags: those the running
 *                    kernel accepts, probed with seccomp(2));
 *   linux.memoryPolicy mempolicy.c;
 *   mountExtensions.idmap whether mountopt.c accepts "idmap".
 * apparmor is enabled (the profile is applied at execve); selinux is not:
 * process labels are applied but mount labels (linux.mountLabel) are not.
 * intelRdt is not (resctrl groups are not created).
 * annotations: "run.oci.sandrun.version" (crun's run.oci.* convention) and
 * "io.github.seccomp.libseccomp.version" (as runc).  No config annotation
 * changes sandrun's behaviour: potentiallyUnsafeConfigAnnotations is empty. */
#ifndef SANDRUN_FEATURES_H
#define SANDRUN_FEATURES_H

/* The document, indented like runc's (4 spaces), with a trailing newline;
 * malloc'd. */
char *sr_features_json (void);

#endif
