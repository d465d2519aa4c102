import { UsageError } from '../../core/errors.ts';
import { ContainerOptionError, type ContainerOptions, normaliseBasePath, parseContainerEnv } from '../../targets/container.ts';
import { intOption } from './args.ts';

// The --image flags of `pmv6 run`; the container logic is in targets/container.ts.

export const CONTAINER_OPTIONS = {
  image: { type: 'string' },
  'container-port': { type: 'string' },
  'container-env': { type: 'string', multiple: true },
  'base-path': { type: 'string' },
  'wait-path': { type: 'string' },
  network: { type: 'string' },
} as const;

export const CONTAINER_HELP = `
Container target (needs a Docker engine, found as testcontainers finds it: DOCKER_HOST, ...):
  --image NAME            start NAME, wait until it answers, run against it, then stop and
                          remove it (also after a failure or an interrupt). The pmv6 reference
                          image (npm run image: pmv6-reference:local) gets the admin user,
                          password and control token from --user/--password/--control-token
                          (or PMV6_*; generated when absent); any other image needs --user and
                          --password, and has the control protocol at {target}/__control when a
                          control token is given
  --container-port N      the port the server listens on inside the container (default 80; on
                          the host network, a free port that the reference image is told to use)
  --container-env K=V     environment of the container (repeatable)
  --base-path /P/         where the installation is mounted (default /)
  --wait-path /P          polled until it answers (default {base-path}index.php/api/v6/version.json)
  --network MODE          docker network mode, e.g. host (no port mapping)`;

interface Values {
  image?: string | undefined;
  'container-port'?: string | undefined;
  'container-env'?: string[] | undefined;
  'base-path'?: string | undefined;
  'wait-path'?: string | undefined;
  network?: string | undefined;
}

/** The container to start, from the flags; undefined without --image. */
export function containerOptions(
  values: Values,
  given: {
    target?: string | undefined;
    control?: string | undefined;
    user?: string | undefined;
    password?: string | undefined;
    controlToken?: string | undefined;
  },
): Omit<ContainerOptions, 'log'> | undefined {
  const image = values.image;
  if (image === undefined) {
    const stray = (['container-port', 'container-env', 'base-path', 'wait-path', 'network'] as const).find((f) => values[f] !== undefined);
    if (stray) throw new UsageError(`--${stray} needs --image`);
    return undefined;
  }
  if (!image.trim()) throw new UsageError('--image needs an image name');
  if (given.target) throw new UsageError('give --target or --image, not both');
  if (given.control) throw new UsageError('--control does not go with --image: the control protocol of a container is at {target}/__control');
  const containerPort = intOption('container-port', values['container-port'], 1, 65535);
  const waitPath = values['wait-path'];
  if (waitPath !== undefined && !waitPath.startsWith('/')) throw new UsageError(`--wait-path must start with "/", got "${waitPath}"`);
  try {
    return {
      image,
      env: parseContainerEnv(values['container-env']),
      basePath: normaliseBasePath(values['base-path']),
      ...(containerPort !== undefined ? { containerPort } : {}),
      ...(waitPath !== undefined ? { waitPath } : {}),
      ...(values.network !== undefined ? { network: values.network } : {}),
      ...(given.user !== undefined ? { user: given.user } : {}),
      ...(given.password !== undefined ? { password: given.password } : {}),
      ...(given.controlToken !== undefined ? { controlToken: given.controlToken } : {}),
    };
  } catch (e) {
    throw e instanceof ContainerOptionError ? new UsageError(e.message) : e;
  }
}
