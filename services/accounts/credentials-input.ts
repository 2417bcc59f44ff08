import { z } from 'zod';
import { NAME_MAX_LENGTH, cleanName, containsLink } from './display-name.ts';

/** Request bodies of the account service, validated into typed input (pure). */

// bcrypt reads at most 72 bytes; a longer password would be silently truncated, so it is refused.
export const PASSWORD_MAX_BYTES = 72;
export const PASSWORD_MIN_LENGTH = 8;

export const normalizeEmail = (email: string): string => email.trim().toLowerCase();

const email = z
  .string({ error: 'email is required' })
  .transform(normalizeEmail)
  .pipe(z.email({ error: 'email is not a valid address' }).max(254, { error: 'email is too long' }));

const password = z
  .string({ error: 'password is required' })
  .min(PASSWORD_MIN_LENGTH, { error: `password must be at least ${PASSWORD_MIN_LENGTH} characters` })
  .refine((p) => Buffer.byteLength(p, 'utf8') <= PASSWORD_MAX_BYTES, {
    error: `password must be at most ${PASSWORD_MAX_BYTES} bytes (UTF-8); longer passwords would be silently truncated`,
  });

export const signupInput = z.object({
  email,
  password,
  name: z
    .string({ error: 'name is required' })
    .transform(cleanName)
    .pipe(
      z
        .string()
        .min(1, { error: 'name is required' })
        .max(NAME_MAX_LENGTH, { error: `name must be at most ${NAME_MAX_LENGTH} characters` })
        // Only a name within the cap is searched: the link pattern takes time quadratic in the length,
        // and a 100 kB name held the event loop for seconds (found by npm run fuzz).
        .refine((n) => n.length > NAME_MAX_LENGTH || !containsLink(n), {
          error: 'name must not contain a link, a domain name or an e-mail address',
        }),
    ),
});

export const loginInput = z.object({
  email,
  password: z.string({ error: 'password is required' }).min(1, { error: 'password is required' }),
});

export const passwordChangeInput = z
  .object({
    currentPassword: z.string({ error: 'currentPassword is required' }).min(1, { error: 'currentPassword is required' }),
    newPassword: z.string({ error: 'newPassword is required' }).pipe(password),
  })
  .refine((p) => p.newPassword !== p.currentPassword, { error: 'newPassword must differ from currentPassword', path: ['newPassword'] });

export type SignupInput = z.infer<typeof signupInput>;
export type LoginInput = z.infer<typeof loginInput>;

/** The first problem, phrased for the caller; never includes the submitted values. */
export function firstProblem(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'invalid request body';
  if (issue.code === 'invalid_type' && issue.path.length === 0) return 'request body must be a JSON object';
  return issue.message;
}
